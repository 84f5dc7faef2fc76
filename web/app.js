// simumax-sim serve's page: pick a scenario, a model and a system from the served folders, edit any field of
// the model or strategy, and the step time, fit verdicts, memory and timeline are redrawn as one types (no run
// button: each edit posts the configs to /api/run after a short pause). A bad field shows the CLI's message.
(function () {
  'use strict';
  const R = window.SimumaxReport;
  if (!R.D.app) return;
  const { el } = R;
  const root = document.getElementById('report');
  const panel = el('section', { id: 'app' });
  root.parentNode.insertBefore(panel, root);
  document.body.classList.add('app');
  const state = { name: 'app', model: null, strategy: null, system: null };
  let seq = 0, shown = 0, editAt = 0, timer = 0;
  let lastSummary = null;  // of the last run the server accepted

  const bar = el('div', { class: 'controls' });
  const picks = {};
  for (const [kind, label] of [['scenarios', 'scenario'], ['models', 'model'], ['platforms', 'system']]) {
    const s = el('select', { id: 'pick-' + label });
    if (kind !== 'scenarios') s.appendChild(el('option', { value: '' }, '(the scenario\'s)'));
    picks[kind] = s;
    const l = el('label', {}, ' ' + label + ' ');
    l.appendChild(s);
    bar.appendChild(l);
  }
  // What-if: the same configs with another system file, drawn side by side with the form's (report_whatif.js).
  const whatifPick = el('select', { id: 'pick-whatif' });
  whatifPick.appendChild(el('option', { value: '' }, '(none)'));
  const wl = el('label', {}, ' what-if: against system ');
  wl.appendChild(whatifPick);
  bar.appendChild(wl);
  const downloadPick = el('select', { id: 'download-file' });
  for (const f of ['scenario.json', 'summary.json', 'trace.json', 'memory_timeline.json', 'memory_snapshot.json',
    'memory_snapshot.pickle', 'report.html', 'compute_result.json', 'mem_result.json', 'base_info.json',
    'net_info.json', 'simu_memory_result.json', 'simu_memory_snapshot.json', 'tracing_logs.json']) {
    downloadPick.appendChild(el('option', { value: f }, f));
  }
  const download = el('button', { id: 'download' }, 'download');
  const dl = el('label', {}, ' file of this run ');
  dl.appendChild(downloadPick);
  bar.appendChild(dl);
  bar.appendChild(download);
  panel.appendChild(bar);
  // Compare with a real run (a profiler trace or Megatron-LM log under the served folders).
  const cmpBar = el('div', { class: 'controls', id: 'compare-controls' });
  const realPick = el('select', { id: 'pick-real' });
  realPick.appendChild(el('option', { value: '' }, '(none)'));
  const cl = el('label', {}, ' real run ');
  cl.appendChild(realPick);
  cmpBar.appendChild(cl);
  const compareButton = el('button', { id: 'compare-run' }, 'compare');
  cmpBar.appendChild(compareButton);
  const cmpNote = el('span', { class: 'note', id: 'compare-status' });
  cmpBar.appendChild(cmpNote);
  panel.appendChild(cmpBar);
  // A search of layouts for this model and system, in the background.
  const srBar = el('div', { class: 'controls', id: 'search-controls' });
  const searchFields = {};
  for (const [key, size] of [['world_size', 6], ['global_batch_size', 6], ['seq_len', 7], ['tp', 8], ['pp', 8],
    ['mbs', 8], ['recompute', 14]]) {
    const input = el('input', { id: 'field-search-' + key, size: String(size), placeholder: 'default' });
    searchFields[key] = input;
    const l = el('label', {}, ' ' + key + ' ');
    l.appendChild(input);
    srBar.appendChild(l);
  }
  const searchButton = el('button', { id: 'search-run' }, 'search');
  const cancelButton = el('button', { id: 'search-cancel', disabled: 'disabled' }, 'cancel');
  const progress = el('progress', { id: 'search-progress', max: '1', value: '0' });
  const srNote = el('span', { class: 'note', id: 'search-status' });
  for (const x of [searchButton, cancelButton, progress, srNote]) srBar.appendChild(x);
  panel.appendChild(srBar);
  // Wide screens: the form (its own scroll, common fields first) on the left, the answer (headline, error, summary
  // with the fit verdicts) on the right; the timeline, what-if and memory below them at the page's width, their
  // top within the first screen whatever the form's length. Narrow screens: the answer first, then the form.
  const main = el('div', { id: 'app-main' });
  const form = el('div', { id: 'app-form' });
  const answer = el('div', { id: 'app-answer' });
  const headline = el('p', { id: 'app-headline' }, 'loading…');
  const problem = el('p', { id: 'app-error', class: 'nofit' });
  const summaryBox = el('div', { id: 'app-summary' });
  const extra = el('div', { id: 'app-extra' });  // a compare or search result, kept until the next one
  for (const x of [headline, problem, summaryBox]) answer.appendChild(x);
  main.appendChild(form);
  main.appendChild(answer);
  panel.appendChild(main);
  root.parentNode.insertBefore(extra, root.nextSibling);
  document.getElementById('status').textContent = 'simumax-sim serve: edit a field, the numbers beside it follow.';

  const getJson = (path) => fetch('/api/file?path=' + encodeURIComponent(path)).then((r) => {
    if (!r.ok) throw new Error(path + ': not served');
    return r.json();
  });
  // "../models/x.json" written in "scenarios/a/b.json" -> "models/x.json".
  function resolve(from, rel) {
    const parts = from.split('/').slice(0, -1);
    for (const p of rel.split('/')) {
      if (p === '..') parts.pop(); else if (p !== '.') parts.push(p);
    }
    return parts.join('/');
  }
  async function loadScenario(path) {
    picks.models.value = '';
    picks.platforms.value = '';
    const sc = await getJson(path);
    const part = async (v) => (typeof v === 'string' ? getJson(resolve(path, v)) : v);
    state.name = sc.name || path;
    state.model = Object.assign(await part(sc.model), sc.model_overrides || {});
    state.strategy = Object.assign(await part(sc.strategy), sc.strategy_overrides || {});
    state.system = await part(sc.system);
    await loadSchema();
    applyHashEdits();
    buildForm();
    schedule();
  }

  // ---- the form, built from the schema the config readers define (POST /api/schema) -------------------------
  // schema: JSON pointer -> {kind, sign?, choices?, required?, default?}. Every object of the configs is a
  // nested, folded group; every field the readers know is there, also those the file leaves to their default.
  let schema = {};
  async function loadSchema() {
    const r = await post('/api/schema');
    schema = r.ok ? await r.json() : schema;  // a config the readers refuse keeps the last schema
  }
  const esc = (k) => k.replace(/~/g, '~0').replace(/\//g, '~1');
  const pointerOf = (kind, path) => '/' + [kind].concat(path).map(esc).join('/');
  function schemaKeys(pointer) {
    const out = [];
    for (const p of Object.keys(schema)) {
      if (!p.startsWith(pointer + '/')) continue;
      const rest = p.slice(pointer.length + 1);
      if (!rest.includes('/')) out.push(rest.replace(/~1/g, '/').replace(/~0/g, '~'));
    }
    return out;
  }
  function valueAt(kind, path) {
    let o = state[kind];
    for (const k of path) { if (o === null || typeof o !== 'object') return undefined; o = o[k]; }
    return o;
  }
  // Sets (or, with undefined, removes) the field at `path`, creating the objects above it.
  function setAt(kind, path, x) {
    let o = state[kind];
    for (const k of path.slice(0, -1)) {
      if (o[k] === null || typeof o[k] !== 'object') o[k] = {};
      o = o[k];
    }
    if (x === undefined) delete o[path[path.length - 1]]; else o[path[path.length - 1]] = x;
  }
  // Text typed into a field -> the JSON value the config gets: numbers for numeric fields when the text is a
  // number (else the text, so that the server answers the CLI's message), JSON for lists and unknown kinds.
  function parseAs(f, text, current) {
    if (text === '') return undefined;
    const kind = f ? f.kind : (typeof current === 'number' ? 'number' : typeof current === 'string' ? 'string' : 'json');
    if (kind === 'integer' || kind === 'number') return text.trim() !== '' && !isNaN(Number(text)) ? Number(text) : text;
    if (kind === 'boolean') return text === 'true' ? true : text === 'false' ? false : text;
    if (kind === 'string' || kind === 'choice') return text;
    try { return JSON.parse(text); } catch (e) { return text; }
  }
  function fieldFor(kind, path) {
    const key = path[path.length - 1], v = valueAt(kind, path), pointer = pointerOf(kind, path);
    const f = schema[pointer];
    const box = el('div', { class: 'field' });
    const label = el('label', { title: f ? f.kind + (f.sign ? ', ' + f.sign : '') + (f.required ? ', required' : '') : 'not read' },
      key + ' ');
    const id = 'field-' + kind + '-' + path.join('.');
    let input;
    const shown = v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
    const fallback = f && 'default' in f ? 'default ' + JSON.stringify(f.default) : 'not set';
    if (f && (f.kind === 'boolean' || f.kind === 'choice')) {
      input = el('select', { id: id, 'data-pointer': pointer });
      if (!f.required) input.appendChild(el('option', { value: '' }, '(' + fallback + ')'));
      for (const c of f.kind === 'boolean' ? ['true', 'false'] : f.choices) input.appendChild(el('option', { value: c }, c));
      input.value = shown;
    } else {
      input = el('input', { id: id, 'data-pointer': pointer, placeholder: fallback });
      input.value = shown;
    }
    input.addEventListener(input.tagName === 'SELECT' ? 'change' : 'input', () => {
      setAt(kind, path, parseAs(f, input.value, v));
      schedule();
    });
    label.appendChild(input);
    box.appendChild(label);
    box.appendChild(el('span', { class: 'field-error nofit' }));
    return box;
  }
  function isObject(x) { return x !== null && typeof x === 'object' && !Array.isArray(x); }
  // The keys of the object at `path`: those in the config, then those only the schema knows.
  function keysOf(kind, path) {
    const obj = valueAt(kind, path);
    const keys = Object.keys(isObject(obj) ? obj : {}).filter((k) => !k.startsWith('_'));
    for (const k of schemaKeys(pointerOf(kind, path))) if (!keys.includes(k)) keys.push(k);
    return keys;
  }
  // The field `key` of the object at `path`, or, for an object, a folded group built when first opened (a
  // system's efficiency tables hold hundreds of fields).
  function addKey(box, kind, path, key) {
    const obj = valueAt(kind, path);
    const sub = path.concat([key]), f = schema[pointerOf(kind, sub)];
    if ((f && f.kind === 'object') || isObject(isObject(obj) ? obj[key] : undefined)) {
      const d = el('details', { class: 'nested', 'data-pointer': pointerOf(kind, sub), id: 'group-' + kind + '-' + sub.join('.') });
      d.appendChild(el('summary', {}, key + (isObject(obj) && key in obj ? '' : ' (not set)')));
      const inner = el('div', { class: 'nested-fields' });
      d.appendChild(inner);
      d.build = () => { if (!d.dataset.built) { d.dataset.built = 'yes'; fillObject(inner, kind, sub); } };
      d.addEventListener('toggle', () => { if (d.open) d.build(); });
      box.appendChild(d);
    } else {
      box.appendChild(fieldFor(kind, sub));
    }
  }
  function fillObject(box, kind, path) {
    for (const key of keysOf(kind, path)) addKey(box, kind, path, key);
  }
  // The strategy's fields most edited, shown first in this order; the others in folded groups by the first rule
  // their name matches (the last rule takes the rest, so no field is lost).
  const COMMON = ['world_size', 'tp_size', 'pp_size', 'cp_size', 'ep_size', 'micro_batch_size', 'micro_batch_num',
    'global_batch_size', 'seq_len', 'enable_recompute', 'recompute_granularity', 'recompute_layer_num'];
  const GROUPS = [['recompute', /recompute/], ['precision', /dtype|fp8|fp32|bf16|accm_weight/],
    ['kernels and fusion', /^use_|fused|fusion|^te_|sdp|overlap|offload|cache_/],
    ['parallelism', /_size$|_net$|parallel|pipeline|interleav|order_of|zero|^cp_|^pp_|dispatch|microbatch_group|num_layers_in/],
    ['advanced', /./]];
  function group(box, id, title) {
    const d = el('details', { class: 'group', id: 'group-' + id });
    d.appendChild(el('summary', {}, title));
    const inner = el('div', { class: 'group-fields' });
    d.appendChild(inner);
    box.appendChild(d);
    return { d, inner, count: 0 };
  }
  function buildForm() {
    form.textContent = '';
    const fs = el('fieldset', { id: 'form-strategy' });
    fs.appendChild(el('legend', {}, 'strategy'));
    const common = el('div', { class: 'group-fields', id: 'group-common' });
    fs.appendChild(common);
    fs.appendChild(el('p', { class: 'note', id: 'app-derived' }));
    const keys = keysOf('strategy', []);
    for (const k of COMMON) if (keys.includes(k)) addKey(common, 'strategy', [], k);
    const groups = GROUPS.map(([title]) => group(fs, 'strategy-' + title.replace(/ /g, '-'), title));
    for (const k of keys.filter((x) => !COMMON.includes(x))) {
      const g = groups[GROUPS.findIndex(([, rule]) => rule.test(k))];
      addKey(g.inner, 'strategy', [], k);
      ++g.count;
    }
    for (const g of groups) {
      if (!g.count) g.d.remove(); else g.d.firstChild.textContent += ' (' + g.count + ')';
    }
    form.appendChild(fs);
    for (const kind of ['model', 'system']) {
      const g = group(form, kind, kind);
      g.d.id = 'form-' + kind;
      fillObject(g.inner, kind, []);
      g.d.firstChild.textContent += ' (' + keysOf(kind, []).length + ')';
    }
    showDerived();
  }
  // dp and the global batch, which the strategy does not hold: from the last run's summary.
  function showDerived() {
    const box = document.getElementById('app-derived');
    const S = lastSummary;
    if (!box) return;
    box.textContent = S && S.parallel ? 'dp ' + S.parallel.dp + (S.batch ? ', global batch ' + S.batch.global_batch_size : '') +
      ' (of the last valid run)' : '';
  }
  // Opens the groups down to `pointer` (an error's field) and returns its input.
  function inputAt(pointer) {
    for (const d of form.querySelectorAll('details.nested')) {
      if (pointer.startsWith(d.dataset.pointer + '/')) { d.build(); d.open = true; }
    }
    const deeper = [...form.querySelectorAll('details.nested')].some((d) => pointer.startsWith(d.dataset.pointer + '/') && !d.open);
    if (deeper) return inputAt(pointer);
    const input = form.querySelector('[data-pointer="' + pointer + '"]');
    for (let d = input && input.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;
    return input;
  }

  // "#strategy.tp_size=2&system.accelerator.mem_gbs=40": edits made on load (a link to a what-if; the browser
  // tests edit the configs this way). "#search.world_size=16" fills the search form, "#real=compare/x.json"
  // picks the real run, "#do=search", "#do=compare" and "#do=download:summary.json" press the button once the
  // first run is drawn, "#type.strategy.tp_size=3" then types into that field as a user would.
  const actions = [];
  function applyHashEdits() {
    for (const part of location.hash.slice(1).split('&').filter((x) => x)) {
      const text = decodeURIComponent(part);
      const a = /^do=(search|compare|download:([A-Za-z0-9_.]+))$/.exec(text);
      if (a) { actions.push(a[2] ? ['download', a[2]] : [a[1]]); continue; }
      const s = /^search\.([a-z_]+)=(.*)$/.exec(text);
      if (s && searchFields[s[1]]) { searchFields[s[1]].value = s[2]; continue; }
      const t = /^type\.(model|strategy|system)\.([A-Za-z0-9_.]+)=(.*)$/.exec(text);
      if (t) { actions.push(['type', t[1], t[2].split('.'), t[3]]); continue; }
      if (text.startsWith('real=')) { realPick.value = text.slice(5); continue; }
      if (text.startsWith('whatif=')) { whatifPick.value = text.slice(7); continue; }
      const m = /^(model|strategy|system)\.([A-Za-z0-9_.]+)=(.*)$/.exec(text);
      if (!m) continue;
      const path = m[2].split('.');
      setAt(m[1], path, parseAs(schema[pointerOf(m[1], path)], m[3], valueAt(m[1], path)));
    }
  }

  function schedule() {
    editAt = performance.now();
    clearTimeout(timer);
    timer = setTimeout(run, 60);
  }
  async function run() {
    const mine = ++seq, started = editAt;
    const r = await post('/api/run');
    const d = await r.json();
    const other = r.ok ? await runOn(whatifPick.value) : null;
    if (mine < shown) return;  // an older answer arriving after a newer one
    shown = mine;
    for (const e of form.querySelectorAll('.field-error')) e.textContent = '';
    problem.textContent = '';
    root.textContent = '';
    summaryBox.textContent = '';
    R.forgetTimelines();
    if (!r.ok) {
      // The last result is removed: no step time of other configs stays beside the error.
      const m = /(\/(?:model|strategy|system)\/[^:]+): /.exec(d.error || '');
      const input = m && inputAt(m[1]);
      if (input) {
        const box = input.parentNode.parentNode.querySelector('.field-error');
        box.textContent = ' ' + d.error;
        box.dataset.error = d.error;
      }
      problem.textContent = d.error;
      headline.textContent = 'no result: these configs are refused (the field is marked in the form)';
      headline.dataset.state = 'error';
      for (const k of ['stepTimeMs', 'whatifStepTimeMs', 'updateMs']) delete headline.dataset[k];
      recordLayout();
      return;
    }
    R.into = summaryBox;
    try { if (d.summary) R.drawSummary(d.summary); } finally { R.into = null; }
    if (other && other.data) {
      R.drawWhatIf({ labels: ['the form', other.path], runs: [d, other.data], differences: { scenario: [], platform: [] },
        note: 'B is the form with its system replaced by ' + other.path + ' (the fast executor, redrawn on every edit).' });
    } else {
      if (d.timeline) R.drawTimeline(d.timeline);
      if (d.memory) R.drawMemory(d.memory, d.summary, d.timeline ? d.timeline.end_us : d.summary.step_time_ms * 1000);
      if (d.ranks) R.drawRanks(d.ranks);
    }
    if (other && other.error) problem.textContent = 'what-if against ' + other.path + ': ' + other.error;
    const ms = performance.now() - started;
    headline.dataset.state = 'ok';
    headline.dataset.stepTimeMs = String(d.summary.step_time_ms);
    headline.dataset.updateMs = ms.toFixed(0);
    const b = other && other.data && other.data.summary;
    if (b) headline.dataset.whatifStepTimeMs = String(b.step_time_ms); else delete headline.dataset.whatifStepTimeMs;
    headline.textContent = '';
    const fits = d.summary.stages.every((st) => st.fits !== false), known = d.summary.stages.every((st) => st.fits !== undefined);
    headline.appendChild(el('b', { class: 'step' }, d.summary.step_time_ms.toFixed(2) + ' ms'));
    headline.appendChild(document.createTextNode(' per step, MFU ' + d.summary.mfu.toFixed(4) + ', '));
    headline.appendChild(el('span', { class: known ? (fits ? 'fits' : 'nofit') : '' },
      known ? (fits ? 'fits in memory' : 'does not fit in memory') : 'fit unknown'));
    headline.appendChild(el('span', { class: 'note' }, (b ? '; with ' + other.path + ': ' + b.step_time_ms.toFixed(2) +
      ' ms, MFU ' + b.mfu.toFixed(4) : '') + ' (updated ' + ms.toFixed(0) + ' ms after the edit)'));
    lastSummary = d.summary;
    showDerived();
    recordLayout();
    while (actions.length) act(actions.shift());
  }
  // Where the answer sits on the page, in px from the DOM, as data-* of #app (the browser tests read them): the
  // page's width (without the scroll bar) and height, the viewport's height, the top of the headline, the summary
  // and the first timeline, the width of the first timeline's canvas and of the what-if section.
  function recordLayout() {
    const box = (sel) => { const e = document.querySelector(sel); return e && e.getBoundingClientRect(); };
    const put = (name, x) => { if (x === undefined) delete panel.dataset[name]; else panel.dataset[name] = String(Math.round(x)); };
    const top = (sel) => { const r = box(sel); return r ? r.top + window.scrollY : undefined; };
    const width = (sel) => { const r = box(sel); return r ? r.width : undefined; };
    put('pageWidth', document.documentElement.clientWidth);
    put('pageHeight', document.documentElement.scrollHeight);
    put('viewportHeight', window.innerHeight);
    put('headlineTop', top('#app-headline'));
    put('answerTop', top('#app-answer'));
    put('summaryTop', top('#summary, #whatif'));
    put('timelineTop', top('#timeline, #timeline-a'));
    put('timelineWidth', width('#timeline canvas, #timeline-a canvas'));
    put('whatifWidth', width('#whatif'));
  }
  function act(a) {
    if (a[0] === 'download') { downloadPick.value = a[1]; fetchFile(false); }
    else if (a[0] === 'compare') compareButton.click();
    else if (a[0] === 'search') searchButton.click();
    else if (a[0] === 'type') {
      const input = inputAt(pointerOf(a[1], a[2]));
      if (!input) return;
      input.value = a[3];
      input.dispatchEvent(new Event(input.tagName === 'SELECT' ? 'change' : 'input'));
    }
  }
  const body = (system) => JSON.stringify({ name: state.name, model: state.model, strategy: state.strategy,
    system: system || state.system });
  const post = (url, system) => fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body(system) });
  // The what-if's side B: the configs run with the system file at `path` -> {path, data} or {path, error}; null
  // without a what-if.
  const systems = {};
  async function runOn(path) {
    if (!path) return null;
    try {
      systems[path] = systems[path] || await getJson(path);
      const r = await post('/api/run', systems[path]);
      const d = await r.json();
      return r.ok ? { path: path, data: d } : { path: path, error: d.error };
    } catch (e) {
      return { path: path, error: e.message };
    }
  }
  function showIn(draw) {
    extra.textContent = '';
    R.into = extra;
    try { draw(); } finally { R.into = null; }
  }

  // Every file `run` writes for these configs, made by the server (the same bytes as the CLI's).
  // `save` false (a link's #do=download:F): fetched as the button does, not saved (a headless browser's save can
  // stall it, and the browser tests check what the button fetches).
  async function fetchFile(save) {
    const file = downloadPick.value;
    download.dataset.state = 'busy';
    const r = await post('/api/download?file=' + encodeURIComponent(file));
    if (!r.ok) { problem.textContent = (await r.json()).error; download.dataset.state = 'error'; return; }
    const blob = await r.blob();
    if (save) {
      const a = el('a', { href: URL.createObjectURL(blob), download: file });
      document.body.appendChild(a);
      a.click();
      a.remove();
    }
    download.dataset.state = 'done';
    download.dataset.lastFile = file;
    download.dataset.lastBytes = String(blob.size);
  }
  download.addEventListener('click', () => fetchFile(true));

  compareButton.addEventListener('click', async () => {
    if (!realPick.value) {
      cmpNote.textContent = realPick.dataset.count === '0' ? ' no trace or log under the served folders (serve --root DIR)'
        : ' pick a real run first';
      return;
    }
    cmpNote.textContent = ' comparing…';
    compareButton.dataset.state = 'busy';
    const r = await post('/api/compare?real=' + encodeURIComponent(realPick.value));
    const d = await r.json();
    if (!r.ok) { cmpNote.textContent = ' ' + d.error; compareButton.dataset.state = 'error'; return; }
    showIn(() => R.drawCompare(d.compare));
    cmpNote.textContent = ' ours (as the form stands, op granularity) against ' + realPick.value;
    compareButton.dataset.state = 'done';
  });

  searchButton.addEventListener('click', async () => {
    const q = new URLSearchParams();
    const st = state.strategy || {};
    const defaults = { world_size: st.world_size, seq_len: st.seq_len,
      global_batch_size: lastSummary && lastSummary.batch ? lastSummary.batch.global_batch_size : undefined };
    for (const [k, input] of Object.entries(searchFields)) {
      const v = input.value.trim() || (defaults[k] === undefined ? '' : String(defaults[k]));
      if (v) q.set(k, v);
    }
    const r = await post('/api/search?' + q.toString());
    const d = await r.json();
    if (!r.ok) { srNote.textContent = ' ' + d.error; progress.dataset.state = 'error'; return; }
    cancelButton.disabled = false;
    searchButton.disabled = true;
    poll();
  });
  cancelButton.addEventListener('click', () => fetch('/api/search/cancel', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }));
  async function poll() {
    const d = await (await fetch('/api/search?wait_ms=1000')).json();
    progress.max = Math.max(1, d.total);
    progress.value = d.done;
    progress.dataset.state = d.state;
    progress.dataset.done = String(d.done);
    progress.dataset.total = String(d.total);
    srNote.textContent = ' ' + d.state + (d.total ? ': ' + d.done + ' of ' + d.total + ' candidates' : '') +
      (d.error ? ': ' + d.error : '');
    if (d.state === 'running') { poll(); return; }
    cancelButton.disabled = true;
    searchButton.disabled = false;
    if (d.state !== 'done') return;
    showIn(() => {
      R.drawSearch(d.result.search);
      const links = el('p', { class: 'note' }, 'Download: ');
      for (const f of ['search.json', 'search.csv']) {
        links.appendChild(el('a', { href: '/api/search/file?name=' + f, download: f, class: 'search-file' }, f));
        links.appendChild(document.createTextNode(' '));
      }
      extra.lastChild.appendChild(links);
    });
  }
  fetch('/api/real-runs').then((r) => r.json()).then((d) => {
    for (const f of d.files) realPick.appendChild(el('option', { value: f }, f));
    realPick.dataset.count = String(d.files.length);
    return fetch('/api/files');
  }).then((r) => r.json()).then((d) => {
    for (const kind of Object.keys(picks)) {
      for (const f of d.files.filter((x) => x.startsWith(kind + '/'))) picks[kind].appendChild(el('option', { value: f }, f));
    }
    picks.scenarios.addEventListener('change', () => loadScenario(picks.scenarios.value));
    const pick = (kind, path) => path && getJson(path).then(async (c) => {
      state[kind] = c;
      await loadSchema();
      buildForm();
      schedule();
    });
    picks.models.addEventListener('change', () => pick('model', picks.models.value));
    picks.platforms.addEventListener('change', () => pick('system', picks.platforms.value));
    for (const f of d.files.filter((x) => x.startsWith('platforms/'))) whatifPick.appendChild(el('option', { value: f }, f));
    whatifPick.addEventListener('change', schedule);
    const first = d.files.includes('scenarios/default.json') ? 'scenarios/default.json' : picks.scenarios.value;
    picks.scenarios.value = first;
    if (first) loadScenario(first);
  });
})();
