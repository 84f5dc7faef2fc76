// simumax-sim HTML report, the comparison part: ours against a real run (compare.json) and the links' use over
// time (links.json's series). Loaded after report.js and before report_charts.js, which draws the page.
(function () {
  'use strict';
  const R = window.SimumaxReport;
  const { el, svg, section, table, legend, tip, untip, fixed } = R;
  const OURS = '#4c78a8', REAL = '#f58518', STRAGGLER = '#b3261e';

  function errText(e) { return e === null || e === undefined ? '' : (e >= 0 ? '+' : '') + e.toFixed(1) + ' %'; }
  function num(v, n) { return v === null || v === undefined ? '' : Number(v).toFixed(n); }
  function label(name) { return name.replace(/_ms$/, '').replace(/_/g, ' '); }

  // The step breakdown, ours above real for each figure, on one scale.
  function breakdownBars(rows) {
    const shown = rows.filter((r) => r.ours !== null || r.real !== null);
    const W = 980, L = 140, Rm = 230, BH = 11, GAP = 8, T = 6;
    const H = T + shown.length * (2 * BH + GAP) + 4;
    const max = Math.max(1e-9, ...shown.map((r) => Math.max(r.ours || 0, r.real || 0)));
    const g = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, id: 'compare-breakdown' });
    shown.forEach((r, i) => {
      const y = T + i * (2 * BH + GAP);
      g.appendChild(svg('text', { x: L - 6, y: y + BH + 4, 'text-anchor': 'end' }, label(r.name)));
      [['ours', r.ours, OURS, y], ['real', r.real, REAL, y + BH]].forEach(([side, v, colour, yy]) => {
        if (v === null) return;
        const w = Math.max(v > 0 ? 1 : 0, v / max * (W - L - Rm));
        const bar = svg('rect', { x: L, y: yy, width: w.toFixed(2), height: BH - 1, fill: colour, class: 'cmp-bar',
          'data-metric': r.name, 'data-side': side, 'data-value': String(v) });
        bar.addEventListener('mousemove', (ev) => tip(ev, label(r.name) + ', ' + side + ': ' + v.toFixed(3) + ' ms'));
        bar.addEventListener('mouseleave', untip);
        g.appendChild(bar);
        g.appendChild(svg('text', { x: L + w + 4, y: yy + BH - 2 }, v.toFixed(3) + ' ms'));
      });
      g.appendChild(svg('text', { x: W - 4, y: y + BH + 4, 'text-anchor': 'end',
        class: r.error_pct === null ? '' : (Math.abs(r.error_pct) <= 10 ? 'ok' : 'off') }, errText(r.error_pct)));
    });
    return g;
  }

  function drawCompareRanks(s, C) {
    s.appendChild(el('h3', {}, 'Ranks: busy time (total − idle) per rank'));
    const ranks = C.ranks, st = C.straggler;
    s.dataset.ranks = String(ranks.length);
    if (st) s.dataset.stragglerRank = String(st.rank);
    const W = 980, L = 80, BH = Math.max(4, Math.min(18, Math.floor(360 / ranks.length))), T = 4, Rm = 120;
    const H = T + ranks.length * BH + 24;
    const max = Math.max(1e-9, ...ranks.map((r) => r.busy_ms));
    const xOf = (v) => L + v / max * (W - L - Rm);
    const g = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, id: 'compare-ranks' });
    ranks.forEach((r, i) => {
      const y = T + i * BH, slow = st && st.rank === r.rank;
      const bar = svg('rect', { x: L, y: y, width: (xOf(r.busy_ms) - L).toFixed(2), height: BH - 1,
        fill: slow ? STRAGGLER : REAL, class: 'rank-bar' + (slow ? ' straggler' : ''), 'data-rank': String(r.rank),
        'data-busy-ms': String(r.busy_ms) });
      bar.addEventListener('mousemove', (ev) => tip(ev, 'rank ' + r.rank + (slow ? ' (straggler)' : '') + '\nbusy ' +
        r.busy_ms.toFixed(3) + ' ms of ' + r.total_ms.toFixed(3) + ' ms per step\ncompute ' + num(r.compute_ms, 3) +
        ' ms, exposed comm ' + num(r.exposed_comm_ms, 3) + ' ms, idle ' + num(r.idle_ms, 3) + ' ms'));
      bar.addEventListener('mouseleave', untip);
      g.appendChild(bar);
      if (BH >= 10) g.appendChild(svg('text', { x: L - 6, y: y + BH - 2, 'text-anchor': 'end' }, 'rank ' + r.rank));
    });
    if (st) {
      const x = xOf(st.median_busy_ms);
      g.appendChild(svg('path', { d: `M${x} ${T}V${T + ranks.length * BH}`, stroke: '#1d2330', 'stroke-dasharray': '4 3' }));
      g.appendChild(svg('text', { x: x + 4, y: T + ranks.length * BH + 14 }, 'median ' + st.median_busy_ms.toFixed(3) + ' ms'));
    }
    s.appendChild(g);
    if (st) {
      s.appendChild(el('p', { class: 'note', id: 'straggler' }, 'Straggler: rank ' + st.rank + ', busy ' +
        st.busy_ms.toFixed(3) + ' ms against the median rank\'s ' + st.median_busy_ms.toFixed(3) + ' ms (ratio ' +
        st.ratio.toFixed(3) + ')' + (st.phase ? '; the phase that makes it slow: ' + st.phase + ' (+' +
        st.phase_excess_ms.toFixed(3) + ' ms over the median)' : '') + '.'));
    }
    s.appendChild(table(['rank', 'steps', 'step ms', 'busy ms', 'compute ms', 'exposed comm ms', 'copies ms', 'idle ms'],
      ranks.map((r) => [r.rank, r.steps, num(r.total_ms, 3), num(r.busy_ms, 3), num(r.compute_ms, 3),
        num(r.exposed_comm_ms, 3), num(r.memory_ms, 3), num(r.idle_ms, 3)]), []));
  }

  function drawCompare(C) {
    const s = section('compare', 'Ours against the real run');
    s.dataset.metrics = String(C.metrics.time.length);
    s.appendChild(el('p', { class: 'note' }, 'Real: ' + C.real.kind + ' ' + C.real.path + ', ' + C.real.steps +
      ' step(s); the real figures are the ' + C.against + ' of ' + C.steps_averaged + '.' +
      (C.ours_rank === undefined ? '' : ' Ours: rank ' + C.ours_rank + '.') + ' Error = (ours − real) / real.'));
    s.appendChild(el('h3', {}, 'Step breakdown (ms per step)'));
    s.appendChild(legend([['ours', OURS], ['real', REAL]]));
    s.appendChild(breakdownBars(C.metrics.time));
    if (C.metrics.counts.length) {
      s.appendChild(el('h3', {}, 'Kernels per step (ours: tasks)'));
      s.appendChild(table(['figure', 'ours', 'real', 'error'], C.metrics.counts.map((r) =>
        [r.name, num(r.ours, 0), num(r.real, 0), errText(r.error_pct)]), [0]));
    }
    if (C.memory && C.memory.some((r) => r.real !== null)) {
      s.appendChild(el('h3', {}, 'Peak memory (GiB)'));
      s.appendChild(table(['figure', 'ours', 'real', 'error'], C.memory.map((r) => [r.name.replace(/_bytes$/, ''),
        r.ours === null ? '' : R.gib(r.ours), r.real === null ? '' : R.gib(r.real), errText(r.error_pct)]), [0]));
    }
    if (C.ops) {
      s.dataset.ops = String(C.ops.length);
      s.dataset.totalOps = String(C.total_ops);
      s.appendChild(el('h3', {}, 'Op by op (median per call; ours in our cost order)'));
      if (C.total_ops > C.ops.length) {
        s.appendChild(el('p', { class: 'note' }, 'The first ' + C.ops.length + ' of ' + C.total_ops +
          ' ops (compare.json has them all).'));
      }
      const t = table(['ours', 'class', 'calls', 'ours µs', 'ours TFLOPS', 'real op', 'pass', 'real µs', 'real TFLOPS',
        'matched by', 'error'], C.ops.map((o) => [o.name, o.class, o.calls, num(o.median_us, 1), num(o.tflops, 1),
        o.real ? o.real.op + (o.real.input_dims ? ' ' + o.real.input_dims : '') : '(none left)', o.real ? o.real.pass : '',
        o.real ? num(o.real.median_us, 1) : '', o.real ? num(o.real.tflops, 1) : '', o.by || '', errText(o.error_pct)]),
      [0, 1, 5, 6, 9]);
      t.id = 'compare-ops';
      s.appendChild(t);
    }
    if (C.ranks && C.ranks.length) drawCompareRanks(s, C);
  }

  // ---- links over time: one row per link, one cell per time bucket, darker = busier ----------------------
  function drawLinkSeries(s, Lk, id) {
    const S = Lk.series, rows = Lk.links.filter((l) => l.utilisation_series);
    if (!S || !rows.length) return;
    s.appendChild(el('h3', {}, 'Utilisation over the step'));
    const W = 980, L = 240, T = 4, RH = 14, B = 34, Rm = 20;
    const n = S.buckets, cw = (W - L - Rm) / n;
    const H = T + rows.length * RH + B;
    const g = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, id: id || 'link-series' });
    g.dataset.links = String(rows.length);
    g.dataset.buckets = String(n);
    rows.forEach((l, i) => {
      const y = T + i * RH;
      g.appendChild(svg('text', { x: L - 6, y: y + RH - 3, 'text-anchor': 'end' }, l.name.slice(0, 38)));
      // One path per shade (10 levels): a few hundred cells each, not one node per cell.
      const shades = new Map();
      l.utilisation_series.forEach((u, k) => {
        if (u <= 0) return;
        const level = u > 1.005 ? 10 : Math.max(1, Math.ceil(u * 9));
        shades.set(level, (shades.get(level) || '') + `M${(L + k * cw).toFixed(2)} ${y}h${cw.toFixed(2)}v${RH - 1}h${(-cw).toFixed(2)}z`);
      });
      for (const [level, d] of [...shades.entries()].sort((a, b) => a[0] - b[0])) {
        g.appendChild(svg('path', { d: d, fill: level === 10 ? STRAGGLER : OURS, 'fill-opacity': level === 10 ? 1 : level / 9 }));
      }
      const hit = svg('rect', { x: L, y: y, width: W - L - Rm, height: RH, fill: 'transparent', class: 'link-row',
        'data-link': l.name });
      hit.addEventListener('mousemove', (ev) => {
        const r = g.getBoundingClientRect();
        const k = Math.max(0, Math.min(n - 1, Math.floor((ev.clientX - r.left - L) / cw)));
        tip(ev, l.name + '\n' + (k * S.bucket_s * 1000).toFixed(3) + '–' + ((k + 1) * S.bucket_s * 1000).toFixed(3) +
          ' ms\nutilisation ' + (l.utilisation_series[k] * 100).toFixed(1) + ' %, busy ' +
          (l.busy_series[k] * 100).toFixed(1) + ' % of the bucket');
      });
      hit.addEventListener('mouseleave', untip);
      g.appendChild(hit);
    });
    const y0 = T + rows.length * RH;
    const endMs = n * S.bucket_s * 1000, step = R.niceStep(endMs, 10);
    for (let t = 0; t <= endMs + 1e-9; t += step) {
      const x = L + t / endMs * (W - L - Rm);
      g.appendChild(svg('path', { d: `M${x} ${y0}v4`, stroke: '#8a92a3' }));
      g.appendChild(svg('text', { x: x, y: y0 + 16, 'text-anchor': 'middle' }, t.toFixed(0)));
    }
    g.appendChild(svg('text', { x: (L + W) / 2, y: y0 + 30, 'text-anchor': 'middle' }, 'time in the step (ms)'));
    s.appendChild(g);
    s.appendChild(el('p', { class: 'note' }, n + ' buckets of ' + (S.bucket_s * 1000).toFixed(3) + ' ms; a cell\'s ' +
      'shade is the bytes the link carried in it / (bandwidth × bucket), each flow\'s bytes spread evenly over its life ' +
      '(red: above 100 %, when flows sharing the link changed rate during their lives). Hover: the busy fraction too.'));
  }

  Object.assign(R, { drawCompare, drawLinkSeries });
})();
