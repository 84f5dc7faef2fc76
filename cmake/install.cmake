# `cmake --install build --prefix P`: a relocatable tree (engine/common/install_paths.hpp finds everything from the
# binary's own place): P/bin/simumax-sim, P/lib/libsimumax_sim.so, P/<SIMUMAX_PYTHON_DIR>/simumax_sim/,
# P/share/simumax-sim/{data,models,platforms,scenarios,strategies}, P/share/doc/simumax-sim/.
# The build tree gets the same layout, so the built binaries find their data the way installed ones do.

set(simumax_data_folders data models platforms scenarios strategies)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/simumax-sim)
foreach(folder ${simumax_data_folders})
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder} ${CMAKE_BINARY_DIR}/share/simumax-sim/${folder} SYMBOLIC)
endforeach()
set_target_properties(simumax_sim PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)

install(TARGETS simumax-sim RUNTIME DESTINATION bin)
# The man page and completion scripts, written by the binary itself (`man`, `completion bash|zsh`).
set(simumax_generated ${CMAKE_BINARY_DIR}/share/man/man1/simumax-sim.1
    ${CMAKE_BINARY_DIR}/share/bash-completion/completions/simumax-sim ${CMAKE_BINARY_DIR}/share/zsh/site-functions/_simumax-sim)
add_custom_command(OUTPUT ${simumax_generated}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/share/man/man1
          ${CMAKE_BINARY_DIR}/share/bash-completion/completions ${CMAKE_BINARY_DIR}/share/zsh/site-functions
  COMMAND sh -c "$<TARGET_FILE:simumax-sim> man > share/man/man1/simumax-sim.1"
  COMMAND sh -c "$<TARGET_FILE:simumax-sim> completion bash > share/bash-completion/completions/simumax-sim"
  COMMAND sh -c "$<TARGET_FILE:simumax-sim> completion zsh > share/zsh/site-functions/_simumax-sim"
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR} DEPENDS simumax-sim VERBATIM
  COMMENT "man page and shell completion of simumax-sim")
add_custom_target(simumax_man_and_completion ALL DEPENDS ${simumax_generated})
install(FILES ${CMAKE_BINARY_DIR}/share/man/man1/simumax-sim.1 DESTINATION share/man/man1)
install(FILES ${CMAKE_BINARY_DIR}/share/bash-completion/completions/simumax-sim
        DESTINATION share/bash-completion/completions)
install(FILES ${CMAKE_BINARY_DIR}/share/zsh/site-functions/_simumax-sim DESTINATION share/zsh/site-functions)
install(TARGETS simumax_sim LIBRARY DESTINATION lib)
foreach(folder ${simumax_data_folders})
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${folder} DESTINATION share/simumax-sim)
endforeach()
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION share/doc/simumax-sim)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION share/doc/simumax-sim)

# The install is relocatable: installed into a temporary prefix, moved, and used from there (tests/install_test.sh).
set(install_test_python "")
if(SIMUMAX_PYTHON AND NOT SIMUMAX_SANITIZE)  # an ASan module needs its runtime preloaded: python/CMakeLists.txt
  set(install_test_python ${Python_EXECUTABLE})
endif()
add_test(NAME install_relocatable COMMAND ${CMAKE_SOURCE_DIR}/tests/install_test.sh ${CMAKE_BINARY_DIR}
         ${CMAKE_SOURCE_DIR} ${SIMUMAX_SHARED_DIR} "${install_test_python}")
set_tests_properties(install_relocatable PROPERTIES TIMEOUT 600)
