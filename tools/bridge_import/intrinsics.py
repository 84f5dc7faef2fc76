"""The few calls and operators a Megatron-Bridge recipe uses that recipe.py cannot follow as Python source.

Each stands in for one library function, with the file it follows named: dataclasses.replace, the device query
(torch.cuda.get_device_properties, answered with the row's GPU), the rank query (rank 0), and the old layout's
workload-config lookup (scripts/performance/utils/utils.py get_workload_base_config). Anything else stays opaque.
"""
import ast
import operator

BUILTINS = ("bool", "int", "float", "len", "min", "max")
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_ORDER = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


def _opaque(why):
    import recipe  # the Reader's module (imported lazily: it imports this one)
    return recipe.Opaque(why)


def _known(*values):
    return all(isinstance(v, (int, float, str, bool)) or v is None for v in values)


def binop(op, left, right):
    fn = _BINOPS.get(type(op))
    if fn is None or not _known(left, right):
        return _opaque("arithmetic on unknown values")
    try:
        return fn(left, right)
    except (TypeError, ZeroDivisionError):
        return _opaque("arithmetic that fails")


def ordering(op, left, right):
    fn = _ORDER.get(type(op))
    if fn is None or not _known(left, right):
        return _opaque("an ordering comparison of unknown values")
    try:
        return fn(left, right)
    except TypeError:
        return _opaque("an ordering comparison of unlike values")


def builtin(name, args):
    if not args or not all(_known(a) or isinstance(a, list) for a in args):
        return _opaque(f"{name}() of unknown values")
    try:
        return {"bool": bool, "int": int, "float": float, "len": len, "min": min, "max": max}[name](*args)
    except (TypeError, ValueError):
        return _opaque(f"{name}() that fails")


_TYPES = {"str": str, "list": list, "int": int, "float": float, "bool": bool, "dict": dict, "tuple": list}


def isinstance_of(value, type_node):
    """isinstance(value, str | list | ...) for a known value (a Python list or tuple is read as a list)."""
    names = [type_node] if not isinstance(type_node, ast.Tuple) else type_node.elts
    if not all(isinstance(n, ast.Name) and n.id in _TYPES for n in names) or not (
            _known(value) or isinstance(value, (list, dict))):
        return _opaque("isinstance of an unknown value or type")
    return any(isinstance(value, _TYPES[n.id]) and not (n.id == "int" and isinstance(value, bool)) for n in names)


def method(owner, name, args):
    """str.upper/lower/startswith/endswith on a known string; anything else is opaque."""
    if isinstance(owner, str) and name in ("upper", "lower") and not args:
        return getattr(owner, name)()
    if isinstance(owner, str) and name in ("startswith", "endswith") and len(args) == 1 and (
            isinstance(args[0], str) or isinstance(args[0], list) and all(isinstance(a, str) for a in args[0])):
        return getattr(owner, name)(tuple(args[0]) if isinstance(args[0], list) else args[0])
    return _opaque(f"method .{name}()")


def device(context):
    """torch.cuda.get_device_properties(0): the row's GPU (compute capability major and product name)."""
    major, name = context.get("device", (None, None))
    return {"major": major, "name": name} if major is not None else {}


def hub_fields(context, model_id):
    """The Hub config fields a recipe reads from the model (num_moe_experts: flex_dispatcher_backend.py)."""
    hub = context.get("hub", {}).get(model_id)
    return {"num_moe_experts": hub.get("experts", 0)} if hub else {}


def emulated(found, name):
    """The stand-in for a call, or None."""
    if found and found[0] == "external" and found[1] == ("dataclasses", "replace"):
        return _replace
    if found and found[0] == "external" and found[1][1] == "get_rank_safe":
        return lambda reader, args, kwargs, where, depth: 0
    if found and found[0] == "external" and found[1] == ("megatron.bridge.utils.cuda_graph",
                                                         "is_full_iteration_cuda_graph"):
        return _is_full_iteration_cuda_graph
    if found and found[0] not in ("const", "external", "class", "module") and found[0].startswith("utils.") \
            and found[1].name == "get_workload_base_config":
        return _workload_base_config
    return None


def _is_full_iteration_cuda_graph(reader, args, kwargs, where, depth):
    """src/megatron/bridge/utils/cuda_graph.py is_full_iteration_cuda_graph (v0.5.0): impl full_iteration, or
    impl local with full_iteration among the scopes."""
    import recipe
    if len(args) != 1 or not isinstance(args[0], recipe.Record):
        return _opaque("is_full_iteration_cuda_graph() of an unknown object")
    impl = args[0].fields.get("cuda_graph_impl", "none")
    scope = args[0].fields.get("cuda_graph_scope")
    if not isinstance(impl, str) or not (scope is None or isinstance(scope, (str, list))):
        return _opaque("is_full_iteration_cuda_graph() of unknown settings")
    if impl != "local":
        return impl == "full_iteration"
    scopes = [scope] if isinstance(scope, str) else list(scope or [])
    if not all(isinstance(x, str) for x in scopes):
        return _opaque("is_full_iteration_cuda_graph() of unknown scopes")
    return "full_iteration" in scopes


def _replace(reader, args, kwargs, where, depth):
    import recipe
    if len(args) != 1 or not isinstance(args[0], recipe.Record):
        return _opaque("replace() of an unknown object")
    unknown = sorted(set(kwargs) - set(args[0].fields))
    if unknown:
        raise recipe.Unread(f"replace() of a field {args[0].kind} does not have: {unknown[0]}")
    record = args[0].copy()
    record.fields.update(kwargs)
    record.where.update({k: where for k in kwargs})
    return record


WORKLOAD_PARAMS = ("model_family_name", "model_recipe_name", "gpu", "compute_dtype", "task", "config_variant")


def _workload_base_config(reader, args, kwargs, where, depth):
    """scripts/performance/utils/utils.py get_workload_base_config (v0.3.0 .. v0.5.1): the module constant
    `{model_recipe_name}_{task}_config_{gpu}_{compute_dtype}_{config_variant}` upper-cased, from the family's
    package `configs.<family>`; a missing v2 falls back to v1, then to the unversioned name; none is an error."""
    import recipe
    bound = dict(zip(WORKLOAD_PARAMS, args), **kwargs)
    bound.setdefault("config_variant", "v1")
    if not all(isinstance(bound.get(k), str) for k in WORKLOAD_PARAMS):
        raise recipe.Unread("get_workload_base_config() of unknown arguments")
    stem = "_".join(bound[k] for k in ("model_recipe_name", "task")) + "_config_" + "_".join(
        bound[k] for k in ("gpu", "compute_dtype"))
    names = [f"{stem}_{bound['config_variant']}"]
    if bound["config_variant"].lower() == "v2":
        names.append(f"{stem}_v1")
    names.append(stem)
    for module in (f"configs.{bound['model_family_name']}", reader.context.get("workload_module")):
        if module is None:
            continue
        for name in names:
            found = reader.resolve(module, name.upper())
            if found and found[0] == "const" and isinstance(found[1], recipe.Record):
                reader.workload_names.append(name.upper())
                return found[1].copy()
    raise recipe.RecipeError(f"{reader.source.show(reader.path_of(module))}: no workload config "
                             f"{names[0].upper()}")
