// simumax-sim HTML report: draws the data that `simumax-sim report` inlined (#report-data) with plain DOM, SVG
// and canvas, no library. The sections and their data-* attributes are what tests/html_report_browser_test reads.
(function () {
  'use strict';
  const startMs = performance.now();
  const D = JSON.parse(document.getElementById('report-data').textContent);
  const parsedMs = performance.now();
  const root = document.getElementById('report');
  const tipBox = document.getElementById('tip');
  const SVGNS = 'http://www.w3.org/2000/svg';
  const KIND_COLOURS = {
    'forward': '#4c78a8', 'backward': '#f58518', 'recompute': '#b279a2', 'tp comm': '#e45756',
    'cp comm': '#ff9da6', 'ep comm': '#9d755d', 'pp send/recv': '#54a24b', 'dp comm': '#72b7b2',
    'optimizer': '#eeca3b', 'sync': '#79706e', 'host': '#b07aa1', 'other': '#9a9a9a'
  };
  const BUBBLE = '#e3e7ef';
  const MEM_COLOURS = {
    'weights': '#4c78a8', 'gradients': '#72b7b2', 'optimizer states': '#54a24b', 'TE buffers': '#9d755d',
    'static': '#4c78a8', 'activations': '#f58518', 'transient': '#e45756'
  };

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const GiB = 1024 * 1024 * 1024;
  const gib = (b) => (b / GiB).toFixed(2);
  const fixed = (x, n) => (x === undefined || x === null ? '' : Number(x).toFixed(n));
  function si(x, unit) {
    if (x === null || x === undefined) return 'n/a';
    const p = [['P', 1e15], ['T', 1e12], ['G', 1e9], ['M', 1e6], ['k', 1e3]];
    for (const [s, v] of p) if (Math.abs(x) >= v) return (x / v).toFixed(2) + ' ' + s + unit;
    return x.toFixed(0) + ' ' + unit;
  }
  function timeText(us) { return us >= 1000 ? (us / 1000).toFixed(3) + ' ms' : us.toFixed(3) + ' µs'; }
  function tip(ev, text) {
    tipBox.textContent = text;
    tipBox.hidden = false;
    tipBox.style.left = Math.min(ev.clientX + 14, window.innerWidth - 430) + 'px';
    tipBox.style.top = (ev.clientY + 14) + 'px';
  }
  function untip() { tipBox.hidden = true; }
  // Sections go to the page's main element, or to R.into when the app draws somewhere else.
  function section(id, title) {
    const s = el('section', { id: id });
    s.appendChild(el('h2', {}, title));
    (window.SimumaxReport.into || root).appendChild(s);
    return s;
  }
  function table(headers, rows, leftCols) {
    const t = el('table');
    const tr = el('tr');
    headers.forEach((h, i) => tr.appendChild(el('th', leftCols.includes(i) ? { class: 'l' } : {}, h)));
    t.appendChild(tr);
    for (const r of rows) {
      const row = el('tr');
      r.forEach((c, i) => {
        const td = c instanceof Node ? el('td') : el('td', leftCols.includes(i) ? { class: 'l' } : {}, String(c));
        if (c instanceof Node) td.appendChild(c);
        row.appendChild(td);
      });
      t.appendChild(row);
    }
    return t;
  }
  function legend(entries) {
    const box = el('div', { class: 'legend' });
    for (const [name, colour] of entries) {
      const s = el('span');
      const i = el('i');
      i.style.background = colour;
      s.appendChild(i);
      s.appendChild(document.createTextNode(name));
      box.appendChild(s);
    }
    return box;
  }
  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  // ---- summary ----------------------------------------------------------------------------------------------
  function drawSummary(S) {
    const s = section('summary', 'Summary');
    const par = S.parallel || {};
    const layout = ['tp', 'cp', 'pp', 'dp', 'ep'].filter((k) => k in par).map((k) => k + par[k]).join(' ');
    const head = [['scenario', S.name || ''], ['fidelity / executor', (S.fidelity || '') + ' / ' + (S.executor || '')],
      ['layout', layout + (par.world_size ? ' (' + par.world_size + ' GPUs)' : '')],
      ['step time', fixed(S.step_time_ms, 2) + ' ms'], ['MFU', fixed(S.mfu, 4)],
      ['TFLOPS / GPU', fixed(S.tflops_per_gpu, 1)], ['tokens / s', fixed(S.tokens_per_s, 0)],
      ['peak reserved (max over stages)', S.peak_reserved_bytes_max === undefined ? '' : gib(S.peak_reserved_bytes_max) + ' GiB'],
      ['GPU memory', S.gpu_memory_bytes === undefined ? 'unknown' : gib(S.gpu_memory_bytes) + ' GiB']];
    const t = table(['', ''], head, [0]);
    t.id = 'summary-head';
    t.dataset.stepTimeMs = String(S.step_time_ms);
    s.appendChild(t);
    const rows = S.stages.map((r) => {
      const v = el('span', { class: r.fits === undefined ? '' : (r.fits ? 'fits' : 'nofit') },
        r.fits === undefined ? 'unknown' : (r.fits ? 'fits' : 'does not fit'));
      v.dataset.stage = String(r.stage);
      v.dataset.fits = r.fits === undefined ? 'unknown' : String(r.fits);
      v.dataset.peakAllocBytes = String(r.peak_alloc_bytes);
      v.className += ' verdict';
      return [r.stage, r.kind || '', r.layers === undefined ? '' : r.layers, fixed(r.fwd_ms, 2), fixed(r.bwd_ms, 2),
        fixed(r.bubble_ms, 2), fixed(r.dp_comm_ms, 2), fixed(r.optimizer_ms, 2), gib(r.peak_alloc_bytes),
        gib(r.peak_reserved_bytes), r.headroom_bytes === undefined ? '' : gib(r.headroom_bytes), v, r.peak_task || ''];
    });
    s.appendChild(table(['stage', 'kind', 'layers', 'fwd ms', 'bwd ms', 'bubble ms', 'DP comm ms', 'optimizer ms',
      'peak alloc GiB', 'peak reserved GiB', 'headroom GiB', 'fit', 'task at peak'], rows, [1, 11, 12]));
    const src = S.stages.length && S.stages[0].fit_source;
    s.appendChild(el('p', { class: 'note' }, src ? 'Fit verdict: ' + src + '.' :
      'No fit verdict: summary.json gives neither a verdict nor the GPU memory.'));
  }

  // ---- timeline ---------------------------------------------------------------------------------------------
  // One window listener each, for the timelines drawn last, by section id (serve redraws them after every edit).
  let windowHandlers = {};
  window.addEventListener('mouseup', () => Object.values(windowHandlers).forEach((h) => h.mouseup()));
  window.addEventListener('resize', () => Object.values(windowHandlers).forEach((h) => h.resize()));
  function forgetTimelines() { windowHandlers = {}; }
  // opts (a what-if draws two timelines on one axis): id and title of the section; endUs, the axis' end (default:
  // this trace's end); view, a {t0, t1} shared with another timeline; peers, an array of draw functions that
  // zoom and pan redraw (this timeline's is added).
  function drawTimeline(T, opts) {
    opts = opts || {};
    const id = opts.id || 'timeline';
    const s = section(id, opts.title || 'Pipeline timeline');
    const C = T.slices;
    const n = C.ts.length;
    s.dataset.lanes = String(T.lanes.length);
    s.dataset.slices = String(n);
    s.dataset.totalSlices = String(T.total_slices);
    s.dataset.endUs = String(T.end_us);
    s.appendChild(el('p', { class: 'note' }, T.lanes.length + ' lanes (one per rank and stream), ' + n +
      ' slices. Wheel: zoom at the pointer; drag: pan; double-click: whole step. Grey on compute lanes: idle (bubble).'));
    if (T.shown_slices < T.total_slices) {
      const d = el('p', { class: 'note', id: 'decimated' }, 'Decimated: ' + T.total_slices + ' slices in the trace, ' +
        T.shown_slices + ' drawn; runs of one kind on a lane, each shorter than ' + timeText(T.merge_below_us) +
        ', are merged into one slice (hover shows how many).');
      s.appendChild(d);
    }
    s.appendChild(legend(T.kinds.map((k) => [k, KIND_COLOURS[k] || '#999']).concat([['idle (bubble)', BUBBLE]])));
    const LABEL = 250, AXIS = 22;
    const LH = T.lanes.length > 400 ? 3 : T.lanes.length > 120 ? 6 : 16;
    const wrap = el('div', { class: 'timeline-wrap' });
    const scroller = el('div', { class: 'timeline-scroll' });
    const canvas = el('canvas');
    canvas.style.position = 'sticky';
    canvas.style.top = '0';
    const spacer = el('div');
    scroller.appendChild(canvas);
    scroller.appendChild(spacer);
    wrap.appendChild(scroller);
    s.appendChild(wrap);
    // Slices are sorted by lane; lane_start[l] is lane l's first (the data has no per-slice lane column).
    const laneStart = Int32Array.from(T.lane_start);
    const laneOf = new Int32Array(n);
    const laneMaxDur = new Float64Array(T.lanes.length);
    for (let l = 0; l < T.lanes.length; ++l) {
      for (let i = laneStart[l]; i < laneStart[l + 1]; ++i) {
        laneOf[i] = l;
        if (C.dur[i] > laneMaxDur[l]) laneMaxDur[l] = C.dur[i];
      }
    }
    const isCompute = T.lanes.map((l) => l.thread === 'compute');
    const fullEnd = opts.endUs || (T.end_us > 0 ? T.end_us : 1);
    s.dataset.axisEndUs = String(fullEnd);
    const view = opts.view || { t0: 0, t1: fullEnd };
    const peers = opts.peers || [];
    const dpr = window.devicePixelRatio || 1;
    let W = 0, H = 0;
    function size() {
      W = Math.max(600, scroller.clientWidth);
      H = Math.min(600, AXIS + T.lanes.length * LH);
      canvas.width = W * dpr; canvas.height = H * dpr;
      canvas.style.width = W + 'px'; canvas.style.height = H + 'px';
      spacer.style.height = Math.max(0, AXIS + T.lanes.length * LH - H) + 'px';
    }
    const xOf = (t) => LABEL + (t - view.t0) / (view.t1 - view.t0) * (W - LABEL);
    function firstAtOrAfter(lane, t) {
      let lo = laneStart[lane], hi = laneStart[lane + 1];
      while (lo < hi) { const m = (lo + hi) >> 1; if (C.ts[m] < t) lo = m + 1; else hi = m; }
      return lo;
    }
    function draw() {
      const g = canvas.getContext('2d');
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.clearRect(0, 0, W, H);
      const top = scroller.scrollTop;
      const first = Math.max(0, Math.floor(top / LH)), last = Math.min(T.lanes.length, Math.ceil((top + H) / LH));
      for (let l = first; l < last; ++l) {
        const y = AXIS + l * LH - top;
        if (isCompute[l]) { g.fillStyle = BUBBLE; g.fillRect(xOf(0), y, xOf(T.end_us) - xOf(0), LH - 1); }
        let lastPx = -1, lastKind = -1;
        for (let i = firstAtOrAfter(l, view.t0 - laneMaxDur[l]); i < laneStart[l + 1] && C.ts[i] <= view.t1; ++i) {
          const x0 = xOf(C.ts[i]), x1 = xOf(C.ts[i] + C.dur[i]);
          if (x1 < LABEL) continue;
          const px = Math.floor(x0);
          if (x1 - x0 < 1 && px === lastPx && C.kind[i] === lastKind) continue;  // same pixel, same colour
          lastPx = px; lastKind = C.kind[i];
          g.fillStyle = KIND_COLOURS[T.kinds[C.kind[i]]] || '#999';
          const left = Math.max(LABEL, x0);
          g.fillRect(left, y, Math.max(1, x1 - left), LH - 1);
        }
        g.fillStyle = '#fff'; g.fillRect(0, y, LABEL, LH);
      }
      // Lane names; with thin lanes only the first lane of a rank, where there is room.
      g.fillStyle = '#1d2330'; g.font = '11px system-ui, sans-serif';
      let lastLabel = -1e9;
      for (let l = first; l < last; ++l) {
        const y = AXIS + l * LH - top;
        if (LH >= 10) g.fillText(('rank ' + T.lanes[l].rank + ' · ' + T.lanes[l].thread).slice(0, 40), 4, y + LH - 4);
        else if ((l === 0 || T.lanes[l - 1].rank !== T.lanes[l].rank) && y - lastLabel >= 12 && y >= AXIS) {
          g.fillText('rank ' + T.lanes[l].rank, 4, y + 10);
          lastLabel = y;
        }
      }
      g.fillStyle = '#fff'; g.fillRect(0, 0, W, AXIS);
      g.strokeStyle = '#8a92a3'; g.fillStyle = '#1d2330'; g.font = '11px system-ui, sans-serif';
      const step = niceStep(view.t1 - view.t0, 10);
      for (let t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
        const x = xOf(t);
        g.beginPath(); g.moveTo(x, AXIS - 6); g.lineTo(x, AXIS); g.stroke();
        g.fillText(timeText(t), x + 2, AXIS - 8);
      }
    }
    function sliceAt(ev) {
      const r = canvas.getBoundingClientRect();
      const x = ev.clientX - r.left, y = ev.clientY - r.top;
      if (x < LABEL || y < AXIS) return -1;
      const l = Math.floor((y - AXIS + scroller.scrollTop) / LH);
      if (l < 0 || l >= T.lanes.length) return -1;
      const t = view.t0 + (x - LABEL) / (W - LABEL) * (view.t1 - view.t0);
      const slack = 2 * (view.t1 - view.t0) / (W - LABEL);
      for (let i = firstAtOrAfter(l, t - laneMaxDur[l] - slack); i < laneStart[l + 1] && C.ts[i] <= t + slack; ++i) {
        if (C.ts[i] - slack <= t && t <= C.ts[i] + C.dur[i] + slack) return i;
      }
      return -1;
    }
    let drag = null;
    canvas.addEventListener('mousemove', (ev) => {
      if (drag) {
        const dt = (ev.clientX - drag.x) / (W - LABEL) * (drag.t1 - drag.t0);
        view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt; redraw(); return;
      }
      const i = sliceAt(ev);
      if (i < 0) { untip(); return; }
      const lane = T.lanes[laneOf[i]];
      tip(ev, T.names[C.name[i]] + '\n' + lane.process + ' · ' + lane.thread + '\nkind: ' + T.kinds[C.kind[i]] +
        '\nstart ' + timeText(C.ts[i]) + ', duration ' + timeText(C.dur[i]) +
        '\nFLOPs: ' + si(C.flops[i], 'FLOP') + ', bytes: ' + si(C.bytes[i], 'B') +
        (C.merged[i] > 1 ? '\n' + C.merged[i] + ' slices merged' : ''));
    });
    canvas.addEventListener('mouseleave', untip);
    canvas.addEventListener('mousedown', (ev) => { drag = { x: ev.clientX, t0: view.t0, t1: view.t1 }; });
    canvas.addEventListener('dblclick', () => { view.t0 = 0; view.t1 = fullEnd; redraw(); });
    canvas.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const r = canvas.getBoundingClientRect();
      const f = Math.max(0, (ev.clientX - r.left - LABEL) / (W - LABEL));
      const at = view.t0 + f * (view.t1 - view.t0);
      const k = ev.deltaY > 0 ? 1.25 : 0.8;
      const span = Math.max(1e-3, (view.t1 - view.t0) * k);
      view.t0 = at - f * span; view.t1 = view.t0 + span; redraw();
    }, { passive: false });
    scroller.addEventListener('scroll', draw);
    windowHandlers[id] = { mouseup: () => { drag = null; }, resize: () => { size(); draw(); } };
    peers.push(draw);
    function redraw() { if (peers.length) peers.forEach((f) => f()); else draw(); }
    size();
    draw();
  }

  window.SimumaxReport = { startMs, parsedMs, D, el, svg, section, table, legend, tip, untip, gib, fixed, si, timeText, niceStep,
    MEM_COLOURS, drawSummary, drawTimeline, forgetTimelines };
})();
