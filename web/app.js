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
  const state = { name: 'app', model: null, strategy: null, system: null };
  let seq = 0, shown = 0, editAt = 0, timer = 0;

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
  const download = el('button', { id: 'download-scenario' }, 'download scenario');
  bar.appendChild(download);
  panel.appendChild(bar);
  const headline = el('p', { id: 'app-headline', class: 'note' }, 'loading…');
  const problem = el('p', { id: 'app-error', class: 'nofit' });
  const form = el('div', { id: 'app-form' });
  panel.appendChild(headline);
  panel.appendChild(problem);
  panel.appendChild(form);
  document.getElementById('status').textContent = 'simumax-sim serve: edit a field, the numbers below follow.';

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
    buildForm();
    applyHashEdits();
    schedule();
  }
  // "#strategy.tp_size=2&model.layer_num=4": edits typed into the form on load (a link to a what-if; the browser
  // test edits the form this way).
  function applyHashEdits() {
    for (const part of location.hash.slice(1).split('&').filter((x) => x)) {
      const m = /^(model|strategy)\.([A-Za-z0-9_]+)=(.*)$/.exec(decodeURIComponent(part));
      const input = m && document.getElementById('field-' + m[1] + '-' + m[2]);
      if (!input) continue;
      if (input.type === 'checkbox') { input.checked = m[3] === 'true'; input.dispatchEvent(new Event('change')); }
      else { input.value = m[3]; input.dispatchEvent(new Event('input')); }
    }
  }

  function fieldFor(kind, key) {
    const v = state[kind][key];
    const box = el('div', { class: 'field' });
    const label = el('label', {}, key + ' ');
    const input = el('input', { 'data-pointer': '/' + kind + '/' + key, id: 'field-' + kind + '-' + key });
    if (typeof v === 'boolean') { input.type = 'checkbox'; input.checked = v; } else { input.value = v === null ? 'null' : String(v); }
    input.addEventListener(typeof v === 'boolean' ? 'change' : 'input', () => {
      let x;
      if (typeof v === 'boolean') x = input.checked;
      else if (typeof v === 'number') x = input.value.trim() !== '' && !isNaN(Number(input.value)) ? Number(input.value) : input.value;
      else if (v === null) { try { x = JSON.parse(input.value); } catch (e) { x = input.value; } }
      else x = input.value;
      state[kind][key] = x;
      schedule();
    });
    label.appendChild(input);
    box.appendChild(label);
    box.appendChild(el('span', { class: 'field-error nofit' }));
    return box;
  }
  function buildForm() {
    form.textContent = '';
    for (const kind of ['strategy', 'model']) {
      const fs = el('fieldset', { id: 'form-' + kind });
      fs.appendChild(el('legend', {}, kind));
      for (const key of Object.keys(state[kind])) {
        const v = state[kind][key];
        if (v === null || ['number', 'string', 'boolean'].includes(typeof v)) fs.appendChild(fieldFor(kind, key));
      }
      form.appendChild(fs);
    }
  }

  function schedule() {
    editAt = performance.now();
    clearTimeout(timer);
    timer = setTimeout(run, 60);
  }
  async function run() {
    const mine = ++seq, started = editAt;
    const body = JSON.stringify({ name: state.name, model: state.model, strategy: state.strategy, system: state.system });
    const r = await fetch('/api/run', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body });
    const d = await r.json();
    if (mine < shown) return;  // an older answer arriving after a newer one
    shown = mine;
    for (const e of form.querySelectorAll('.field-error')) e.textContent = '';
    problem.textContent = '';
    if (!r.ok) {
      const m = /(\/(?:model|strategy|system)\/[^:]+): /.exec(d.error || '');
      const input = m && form.querySelector('[data-pointer="' + m[1] + '"]');
      if (input) input.parentNode.parentNode.querySelector('.field-error').textContent = ' ' + d.error;
      else problem.textContent = d.error;
      headline.dataset.state = 'error';
      return;
    }
    root.textContent = '';
    if (d.summary) R.drawSummary(d.summary);
    if (d.timeline) R.drawTimeline(d.timeline);
    if (d.memory) R.drawMemory(d.memory, d.summary, d.timeline ? d.timeline.end_us : d.summary.step_time_ms * 1000);
    const ms = performance.now() - started;
    headline.dataset.state = 'ok';
    headline.dataset.stepTimeMs = String(d.summary.step_time_ms);
    headline.dataset.updateMs = ms.toFixed(0);
    headline.textContent = 'step time ' + d.summary.step_time_ms.toFixed(2) + ' ms, MFU ' + d.summary.mfu.toFixed(4) +
      ' (updated ' + ms.toFixed(0) + ' ms after the edit)';
  }

  download.addEventListener('click', () => {
    const blob = new Blob([JSON.stringify({ name: state.name, model: state.model, strategy: state.strategy,
      system: state.system }, null, 1)], { type: 'application/json' });
    const a = el('a', { href: URL.createObjectURL(blob), download: 'scenario.json' });
    a.click();
  });
  fetch('/api/files').then((r) => r.json()).then((d) => {
    for (const kind of Object.keys(picks)) {
      for (const f of d.files.filter((x) => x.startsWith(kind + '/'))) picks[kind].appendChild(el('option', { value: f }, f));
    }
    picks.scenarios.addEventListener('change', () => loadScenario(picks.scenarios.value));
    picks.models.addEventListener('change', () => picks.models.value && getJson(picks.models.value).then((m) => { state.model = m; buildForm(); schedule(); }));
    picks.platforms.addEventListener('change', () => picks.platforms.value && getJson(picks.platforms.value).then((s) => { state.system = s; schedule(); }));
    const first = d.files.includes('scenarios/default.json') ? 'scenarios/default.json' : picks.scenarios.value;
    picks.scenarios.value = first;
    if (first) loadScenario(first);
  });
})();
