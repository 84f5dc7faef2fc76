// simumax-sim HTML report, second part: the memory curves, the busiest links and the search plot, then draws
// every section the data has (report.js defines the helpers, the summary and the timeline).
(function () {
  'use strict';
  const R = window.SimumaxReport;
  const { D, el, svg, section, table, legend, tip, untip, gib, fixed, niceStep, MEM_COLOURS } = R;
  const GiB = 1024 * 1024 * 1024;

  function axes(g, x0, x1, y0, y1, xs, ys, xLabel, yLabel, xFmt, yFmt) {
    const ax = svg('g', { class: 'axis' });
    ax.appendChild(svg('path', { d: `M${x0} ${y0}H${x1}M${x0} ${y0}V${y1}`, fill: 'none' }));
    for (const [v, x] of xs) {
      ax.appendChild(svg('line', { x1: x, x2: x, y1: y0, y2: y0 + 4 }));
      ax.appendChild(svg('text', { x: x, y: y0 + 15, 'text-anchor': 'middle' }, xFmt(v)));
    }
    for (const [v, y] of ys) {
      ax.appendChild(svg('line', { x1: x0 - 4, x2: x0, y1: y, y2: y }));
      ax.appendChild(svg('text', { x: x0 - 6, y: y + 4, 'text-anchor': 'end' }, yFmt(v)));
    }
    ax.appendChild(svg('text', { x: (x0 + x1) / 2, y: y0 + 30, 'text-anchor': 'middle' }, xLabel));
    ax.appendChild(svg('text', { x: 12, y: (y0 + y1) / 2, transform: `rotate(-90 12 ${(y0 + y1) / 2})`,
      'text-anchor': 'middle' }, yLabel));
    g.appendChild(ax);
  }
  function ticks(lo, hi, count, map) {
    const step = niceStep(hi - lo, count), out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) out.push([v, map(v)]);
    return out;
  }
  // A log axis's ticks: 1, 2, 5 of each decade in [lo, hi] (lo > 0).
  function logTicks(lo, hi, map) {
    const out = [];
    for (let d = Math.pow(10, Math.floor(Math.log10(lo))); d <= hi; d *= 10) {
      for (const m of [1, 2, 5]) if (d * m >= lo && d * m <= hi) out.push([d * m, map(d * m)]);
    }
    return out;
  }
  // An axis over [lo, hi] mapped onto [a, b] pixels: logarithmic when the values span more than a decade (a
  // search's candidates range from a few GiB to thousands), else linear with padding. {of, ticks, log}.
  function scale(lo, hi, a, b, count) {
    if (lo > 0 && hi / lo > 10) {
      const l0 = Math.log10(lo / 1.05), l1 = Math.log10(hi * 1.05);
      const of = (v) => a + (Math.log10(Math.max(v, lo / 1.05)) - l0) / (l1 - l0) * (b - a);
      return { of: of, ticks: logTicks(lo / 1.05, hi * 1.05, of), log: true };
    }
    const pad = (hi - lo) * 0.03 || 1, l = lo - pad, h = hi + pad;
    const of = (v) => a + (v - l) / (h - l) * (b - a);
    return { of: of, ticks: ticks(l, h, count, of), log: false };
  }

  // ---- memory -----------------------------------------------------------------------------------------------
  function staticBands(rank, S) {
    const st = S && S.stages && S.stages.find((r) => r.stage === rank.pp_stage);
    const staticBytes = rank.samples.length ? rank.samples[0][2] : 0;
    if (st && st.weight_bytes !== undefined && st.grad_bytes !== undefined && st.optimizer_state_bytes !== undefined) {
      const parts = [['weights', st.weight_bytes], ['gradients', st.grad_bytes],
        ['optimizer states', st.optimizer_state_bytes], ['TE buffers', st.te_dummy_wgrad_bytes || 0],
        ['cuBLAS workspaces', st.cublas_workspace_bytes || 0]];
      if (parts.reduce((a, p) => a + p[1], 0) === staticBytes) return parts;
    }
    return [['static', staticBytes]];
  }
  // opts: yMaxBytes, the top of the y axis (a what-if draws two runs on one scale); prefix of the peak's id.
  function drawMemoryRank(s, rank, S, endUs, opts) {
    const W = 980, H = 260, L = 70, Rm = 20, T = 16, B = 40;
    const box = el('div', { class: 'memory-rank' });
    box.appendChild(el('h3', {}, 'rank ' + rank.rank + (rank.pp_stage === undefined ? '' : ' (pp stage ' + rank.pp_stage + ')')));
    const bands = staticBands(rank, S);
    const gpu = S && S.gpu_memory_bytes;
    let yMax = Math.max(rank.peak_allocated_bytes * 1.05, opts.yMaxBytes || 0);
    if (gpu && gpu < rank.peak_allocated_bytes * 1.6) yMax = Math.max(yMax, gpu * 1.02);
    const xOf = (t) => L + t / (endUs || 1) * (W - L - Rm), yOf = (b) => H - B - b / yMax * (H - B - T);
    const g = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    const smp = rank.samples, n = smp.length;
    // Bands from the bottom: the static parts (constant: one rectangle each), then activations, then transient
    // buffers (step curves). Each x and each curve's y is formatted once: the 512-GPU page draws 4 x 1,300 steps.
    const xs = new Array(n + 1);
    for (let k = 0; k < n; ++k) xs[k] = xOf(smp[k][0]).toFixed(2);
    xs[n] = xOf(endUs).toFixed(2);
    const band = (name, d) => g.appendChild(svg('path', { d: d, fill: MEM_COLOURS[name], 'fill-opacity': 0.85,
      class: 'band', 'data-kind': name }));
    const x0 = xs[0], x1 = xs[n];
    let acc = 0;
    if (bands.length > 1) {
      for (const [name, bytes] of bands) {
        band(name, `M${x0} ${yOf(acc).toFixed(2)}H${x1}V${yOf(acc + bytes).toFixed(2)}H${x0}Z`);
        acc += bytes;
      }
    }
    const curve = (f) => { const ys = new Array(n); for (let k = 0; k < n; ++k) ys[k] = yOf(f(smp[k])).toFixed(2); return ys; };
    const zero = new Array(n).fill(yOf(0).toFixed(2));
    const layers = [['activations', curve((p) => p[2] + p[3])], ['transient', curve((p) => p[2] + p[3] + p[4])]];
    if (bands.length === 1) layers.unshift(['static', curve((p) => p[2])]);
    let below = bands.length === 1 ? zero : curve((p) => p[2]);
    for (const [name, top] of layers) {
      let d = '';
      for (let k = 0; k < n; ++k) d += (k ? 'L' : 'M') + xs[k] + ' ' + top[k] + 'L' + xs[k + 1] + ' ' + top[k];
      for (let k = n - 1; k >= 0; --k) d += 'L' + xs[k + 1] + ' ' + below[k] + 'L' + xs[k] + ' ' + below[k];
      band(name, d + 'Z');
      below = top;
    }
    axes(g, L, W - Rm, H - B, T, ticks(0, endUs, 10, xOf), ticks(0, yMax / GiB, 6, (v) => yOf(v * GiB)),
      'time in the step (ms)', 'GiB', (v) => (v / 1000).toFixed(0), (v) => v.toFixed(0));
    if (gpu && gpu <= yMax) {
      g.appendChild(svg('path', { d: `M${L} ${yOf(gpu)}H${W - Rm}`, stroke: '#b3261e', 'stroke-dasharray': '5 4' }));
      g.appendChild(svg('text', { x: W - Rm - 4, y: yOf(gpu) - 4, 'text-anchor': 'end' }, 'GPU memory ' + gib(gpu) + ' GiB'));
    }
    const px = xOf(rank.peak_time_us), py = yOf(rank.peak_allocated_bytes);
    g.appendChild(svg('path', { d: `M${px} ${H - B}V${py}`, stroke: '#1d2330', 'stroke-dasharray': '2 3' }));
    const peak = svg('circle', { cx: px, cy: py, r: 4, fill: '#1d2330', class: 'mem-peak', id: (opts.prefix || '') + 'mem-peak-rank-' + rank.rank,
      'data-rank': rank.rank, 'data-peak-bytes': rank.peak_allocated_bytes });
    if (rank.pp_stage !== undefined) peak.setAttribute('data-pp-stage', rank.pp_stage);
    g.appendChild(peak);
    const task = rank.at_peak ? rank.at_peak.task : '';
    g.appendChild(svg('text', { x: Math.min(px + 6, W - 260), y: Math.max(T + 10, py - 6) },
      'peak ' + gib(rank.peak_allocated_bytes) + ' GiB at ' + (rank.peak_time_us / 1000).toFixed(2) + ' ms' +
      (task ? ' (' + task + ')' : '')));
    g.addEventListener('mousemove', (ev) => {
      const r = g.getBoundingClientRect();
      const t = (ev.clientX - r.left - L) / (W - L - Rm) * endUs;
      let k = 0;
      while (k + 1 < smp.length && smp[k + 1][0] <= t) ++k;
      if (t < 0 || !smp.length) { untip(); return; }
      tip(ev, (t / 1000).toFixed(3) + ' ms\nallocated ' + gib(smp[k][1]) + ' GiB\nstatic ' + gib(smp[k][2]) +
        ' GiB\nactivations ' + gib(smp[k][3]) + ' GiB\ntransient ' + gib(smp[k][4]) + ' GiB');
    });
    g.addEventListener('mouseleave', untip);
    box.appendChild(g);
    if (rank.at_peak && rank.at_peak.live.length) {
      box.appendChild(el('p', { class: 'note' }, 'Live at the peak (largest first), while ' + rank.at_peak.task + ' ran:'));
      box.appendChild(table(['allocation', 'GiB'], rank.at_peak.live.map((a) => [a.name, gib(a.bytes)]), [0]));
    }
    if (rank.total_samples > smp.length) {
      box.appendChild(el('p', { class: 'note' }, 'Decimated: ' + rank.total_samples + ' samples, ' + smp.length +
        ' drawn (the highest of each run of consecutive samples, and the peak).'));
    }
    s.appendChild(box);
  }
  // opts (a what-if): id and title of the section, yMaxBytes and prefix as drawMemoryRank's.
  function drawMemory(M, S, endUs, opts) {
    opts = opts || {};
    const s = section(opts.id || 'memory', opts.title || 'Memory over the step');
    s.dataset.ranks = String(M.ranks.length);
    if (M.traced_ranks > M.ranks.length) {
      s.appendChild(el('p', { class: 'note' }, M.traced_ranks + ' ranks traced; drawn: the rank with the highest peak of ' +
        'each pipeline stage.'));
    }
    s.appendChild(legend(['weights', 'gradients', 'optimizer states', 'TE buffers', 'activations', 'transient']
      .map((k) => [k, MEM_COLOURS[k]])));
    for (const rank of M.ranks) drawMemoryRank(s, rank, S, endUs, opts);
  }

  // ---- links ------------------------------------------------------------------------------------------------
  // opts (a what-if): id and title of the section.
  function drawLinks(Lk, opts) {
    opts = opts || {};
    const s = section(opts.id || 'links', opts.title || 'Busiest links');
    if (!Lk.links.length) { s.appendChild(el('p', { class: 'note' }, 'No link carried a flow.')); return; }
    const keys = Object.keys(Lk.links[0]).sort((a, b) => (b === 'name') - (a === 'name'));
    const rows = Lk.links.map((l) => keys.filter((k) => !k.endsWith('_series')).map((k) => {
      const v = l[k];
      if (k === 'utilisation' && typeof v === 'number') {
        const span = el('span');
        const bar = el('span', { class: 'bar' });
        bar.style.width = Math.round(Math.min(1, v) * 120) + 'px';
        span.appendChild(bar);
        span.appendChild(document.createTextNode(' ' + (v * 100).toFixed(1) + ' %'));
        return span;
      }
      return typeof v === 'number' ? (Number.isInteger(v) ? v : v.toPrecision(4)) : String(v);
    }));
    s.appendChild(table(keys.filter((k) => !k.endsWith('_series')), rows, [0]));
    s.appendChild(el('p', { class: 'note' }, 'Utilisation: bytes / (bandwidth × step time); the ' + Lk.links.length +
      ' busiest links of links.json.'));
    R.drawLinkSeries(s, Lk, opts.id ? opts.id + '-series' : 'link-series');
  }

  // ---- slowest ranks (ranks.json) -----------------------------------------------------------------------------
  // The latest ranks as a table and bars, and a histogram of every rank's lateness (the page never lists every rank).
  function drawRanks(Rk) {
    const s = section('ranks', 'Slowest ranks');
    s.dataset.ranks = String(Rk.ranks);
    s.dataset.shown = String(Rk.slowest.length);
    s.dataset.slowestRank = String(Rk.slowest_rank);
    s.appendChild(el('p', { class: 'note' }, Rk.ranks + ' ranks in ranks.json (' + Rk.rank_scope + ', ' + Rk.executor +
      '); ends from ' + fixed(Rk.earliest_end_ms, 3) + ' to ' + fixed(Rk.latest_end_ms, 3) + ' ms; late = end − earliest end.'));
    if (!Rk.slowest.length) return;
    const maxLate = Rk.histogram.max_late_ms || 1;
    const rows = Rk.slowest.map((r) => {
      const span = el('span');
      const bar = el('span', { class: 'bar' });
      bar.style.width = Math.round(r.late_ms / maxLate * 120) + 'px';
      span.appendChild(bar);
      span.appendChild(document.createTextNode(' ' + fixed(r.late_ms, 3)));
      span.className = 'rank-late';
      span.dataset.rank = String(r.rank);
      span.dataset.lateMs = String(r.late_ms);
      return [r.rank, r.stage, span, fixed(r.exposed_comm_ms, 3)].concat(r.kind_exposed_ms.map((x) => fixed(x, 3)),
        [gib(r.peak_allocated_bytes), gib(r.peak_reserved_bytes)]);
    });
    const t = table(['job rank', 'stage', 'late ms', 'exposed comm ms'].concat(Rk.kinds.map((k) => k + ' exposed ms'),
      ['peak alloc GiB', 'peak reserved GiB']), rows, []);
    t.id = 'ranks-slowest';
    s.appendChild(t);
    const H = Rk.histogram, W = 980, Hh = 200, L = 70, Rm = 20, T = 12, B = 40;
    const n = H.counts.length, yMax = Math.max(1, ...H.counts);
    const xOf = (v) => L + v / (H.max_late_ms || 1) * (W - L - Rm), yOf = (v) => Hh - B - v / yMax * (Hh - B - T);
    const g = svg('svg', { width: W, height: Hh, viewBox: `0 0 ${W} ${Hh}`, id: 'ranks-histogram' });
    g.dataset.bins = String(n);
    g.dataset.total = String(H.counts.reduce((a, b) => a + b, 0));
    axes(g, L, W - Rm, Hh - B, T, ticks(0, H.max_late_ms || 1, 10, xOf), ticks(0, yMax, 5, yOf),
      'late (ms)', 'ranks', (v) => v.toPrecision(3), (v) => v.toFixed(0));
    const bw = (W - L - Rm) / n;
    H.counts.forEach((c, i) => {
      if (!c) return;
      const r = svg('rect', { x: L + i * bw, y: yOf(c), width: Math.max(1, bw - 1), height: Hh - B - yOf(c), fill: '#4c78a8' });
      r.addEventListener('mousemove', (ev) => tip(ev, c + ' ranks late ' + (i * H.max_late_ms / n).toFixed(3) + '–' +
        ((i + 1) * H.max_late_ms / n).toFixed(3) + ' ms'));
      r.addEventListener('mouseleave', untip);
      g.appendChild(r);
    });
    s.appendChild(g);
  }

  // ---- search -----------------------------------------------------------------------------------------------
  function drawSearch(Sr) {
    const s = section('search', 'Search: step time against peak memory');
    const C = Sr.candidates;
    s.dataset.candidates = String(C.length);
    s.dataset.feasible = String(C.filter((c) => c.fits).length);
    s.dataset.pareto = String(Sr.pareto.length);
    if (Sr.title) s.appendChild(el('p', { class: 'note' }, Sr.title));
    if (Sr.records === 'fit') {
      s.appendChild(el('p', { class: 'note', id: 'search-records' }, 'search.json holds only the ' + C.length +
        ' layouts that fit (of ' + (Sr.evaluated || 0) + ' evaluated): the search ran with --records fit or ' +
        'auto; --records all writes every one.'));
    }
    if (!C.length) { s.appendChild(el('p', { class: 'note' }, 'No candidate was evaluated.')); return; }
    const W = 980, H = 420, L = 80, Rm = 20, T = 16, B = 44;
    const limit = Sr.gpu_memory_gib === undefined ? undefined : Sr.gpu_memory_gib - (Sr.memory_margin_gib || 0);
    let memLo = limit === undefined ? Infinity : limit, memHi = -Infinity, tLo = Infinity, tHi = -Infinity;
    for (const c of C) {  // no spread: a search has hundreds of thousands of candidates
      memLo = Math.min(memLo, c.peak_reserved_gib); memHi = Math.max(memHi, c.peak_reserved_gib);
      tLo = Math.min(tLo, c.step_time_ms); tHi = Math.max(tHi, c.step_time_ms);
    }
    // Memory spans decades when most layouts do not fit: a log axis keeps those that fit readable.
    const xs = scale(memLo, memHi, L, W - Rm, 10), ys = scale(tLo, tHi, H - B, T, 8);
    const xOf = xs.of, yOf = ys.of;
    const g = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    s.dataset.xScale = xs.log ? 'log' : 'linear';
    s.dataset.yScale = ys.log ? 'log' : 'linear';
    const fmt = (v) => (v >= 10 || v === 0 ? v.toFixed(0) : String(+v.toPrecision(2)));
    axes(g, L, W - Rm, H - B, T, xs.ticks, ys.ticks, 'peak reserved memory (GiB' + (xs.log ? ', log scale)' : ')'),
      'step time (ms' + (ys.log ? ', log scale)' : ')'), fmt, fmt);
    if (limit !== undefined && limit <= memHi * 1.05) {
      g.appendChild(svg('path', { d: `M${xOf(limit)} ${H - B}V${T}`, stroke: '#b3261e', 'stroke-dasharray': '5 4' }));
      g.appendChild(svg('text', { x: xOf(limit) + 4, y: T + 10 }, 'memory limit ' + limit.toFixed(1) + ' GiB'));
    }
    // One path per class (thousands of candidates): a small square per point.
    for (const [fits, colour] of [[false, '#c9ced8'], [true, '#4c78a8']]) {
      let d = '';
      for (const c of C) if (c.fits === fits) d += `M${(xOf(c.peak_reserved_gib) - 2).toFixed(1)} ${(yOf(c.step_time_ms) - 2).toFixed(1)}h4v4h-4z`;
      g.appendChild(svg('path', { d: d, fill: colour, class: fits ? 'feasible' : 'infeasible' }));
    }
    const front = Sr.pareto.map((i) => C[i]);
    g.appendChild(svg('path', { d: front.map((c, k) => `${k ? 'L' : 'M'}${xOf(c.peak_reserved_gib)} ${yOf(c.step_time_ms)}`).join(''),
      fill: 'none', stroke: '#f58518', 'stroke-width': 2 }));
    for (const c of front) {
      g.appendChild(svg('circle', { cx: xOf(c.peak_reserved_gib), cy: yOf(c.step_time_ms), r: 4, fill: '#f58518', class: 'pareto' }));
    }
    g.addEventListener('mousemove', (ev) => {
      const r = g.getBoundingClientRect();
      const x = ev.clientX - r.left, y = ev.clientY - r.top;
      let best = -1, bd = 64;
      for (let i = 0; i < C.length; ++i) {
        const dx = xOf(C[i].peak_reserved_gib) - x, dy = yOf(C[i].step_time_ms) - y, d2 = dx * dx + dy * dy;
        if (d2 < bd) { bd = d2; best = i; }
      }
      if (best < 0) { untip(); return; }
      const c = C[best];
      tip(ev, c.label + '\nstep ' + c.step_time_ms.toFixed(2) + ' ms, peak reserved ' + c.peak_reserved_gib.toFixed(2) +
        ' GiB\n' + (c.fits ? 'fits' : 'does not fit') + (c.rank !== undefined ? ', rank ' + c.rank : '') +
        (c.mfu !== undefined ? '\nMFU ' + c.mfu.toFixed(4) : ''));
    });
    g.addEventListener('mouseleave', untip);
    s.appendChild(legend([['fits', '#4c78a8'], ['does not fit', '#c9ced8'], ['Pareto front (of those that fit)', '#f58518']]));
    s.appendChild(g);
    const ranked = C.filter((c) => c.rank !== undefined).sort((a, b) => a.rank - b.rank).slice(0, 20);
    s.appendChild(el('h3', {}, 'Best layouts' + (Sr.objective ? ' (objective: ' + Sr.objective + ')' : '')));
    const t = table(['rank', 'layout', 'step ms', 'peak reserved GiB', 'headroom GiB', 'MFU', 'tokens/s', 'sim step ms'],
      ranked.map((c) => [c.rank, c.label, fixed(c.step_time_ms, 2), fixed(c.peak_reserved_gib, 2), fixed(c.headroom_gib, 2),
        fixed(c.mfu, 4), fixed(c.tokens_per_s, 0), c.sim_step_time_ms === undefined ? '' : fixed(c.sim_step_time_ms, 2)]), [1]);
    t.id = 'search-best';
    s.appendChild(t);
  }

  Object.assign(R, { drawMemory, drawLinks, drawRanks, drawSearch, axes, ticks });

  function main() {
    // Where the time goes (data-timings, ms): the page's text parsed, the data parsed, each section drawn.
    const timings = ['html ' + R.startMs.toFixed(0), 'data ' + (R.parsedMs - R.startMs).toFixed(0)];
    const timed = (name, draw) => {
      const t = performance.now();
      draw();
      timings.push(name + ' ' + (performance.now() - t).toFixed(0));
    };
    if (D.whatif) timed('whatif', () => R.drawWhatIf(D.whatif));
    if (D.summary) timed('summary', () => R.drawSummary(D.summary));
    const endUs = D.timeline ? D.timeline.end_us : D.summary ? D.summary.step_time_ms * 1000 : 0;
    if (D.timeline) timed('timeline', () => R.drawTimeline(D.timeline));
    if (D.memory) timed('memory', () => drawMemory(D.memory, D.summary, endUs));
    if (D.ranks) timed('ranks', () => drawRanks(D.ranks));
    if (D.links) timed('links', () => drawLinks(D.links));
    if (D.search) timed('search', () => drawSearch(D.search));
    if (D.compare) timed('compare', () => R.drawCompare(D.compare));
    if (D.sweep) timed('sweep', () => R.drawSweep(D.sweep));
    document.body.dataset.timings = timings.join(', ');
    const missing = [];
    if (D.summary && !D.timeline) missing.push('no trace.json (run with --trace for the timeline)');
    if (D.summary && !D.memory) missing.push('no memory_timeline.json (run with --memory for the memory curves)');
    const st = document.getElementById('status');
    if (D.whatif) {
      D.whatif.runs.forEach((r, i) => {
        const who = D.whatif.labels[i] + ': ';
        if (!r.timeline) missing.push(who + 'no trace.json (run with --trace for the timeline)');
        if (!r.memory) missing.push(who + 'no memory_timeline.json (run with --memory for the memory curves)');
      });
    }
    st.textContent = 'Generated by simumax-sim ' + (D.sweep ? 'sweep' : 'report') + (D.whatif ? ' (a what-if of two runs).' : '.') +
      (missing.length ? ' Not drawn: ' + missing.join('; ') + '.' : '');
    document.body.dataset.renderMs = performance.now().toFixed(0);  // since navigation start
    document.body.dataset.scriptMs = (performance.now() - R.startMs).toFixed(0);  // this script alone
    document.body.dataset.rendered = 'yes';
  }
  window.addEventListener('error', (e) => {
    document.body.dataset.renderError = String(e.message);
    document.getElementById('status').textContent = 'This page failed to draw: ' + e.message;
  });
  main();
})();
