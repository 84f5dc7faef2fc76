// simumax-sim HTML report: a sweep (sweep.json): the cases as a sortable table, the step time of each case grouped
// by the swept values, and the best case per layout. Loaded before report_charts.js, whose axes it uses when drawn.
(function () {
  'use strict';
  const R = window.SimumaxReport;
  const { el, svg, section, table, legend, tip, untip, fixed } = R;
  const PALETTE = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2', '#eeca3b', '#b279a2', '#ff9da6', '#9d755d',
    '#bab0ac'];
  const colourOf = (s) => PALETTE[s % PALETTE.length];
  const verdict = (c) => (c.fits === null ? '' : c.fits ? 'fits' : 'does not fit');

  function drawHead(s, W) {
    const head = [['sweep', W.name], ['description', W.description], ['base scenario', W.base],
      ['run', W.executor + ' executor, ranks ' + W.ranks + ', ' + W.granularity + ' tasks, memory margin ' +
        W.memory_margin_gib + ' GiB'],
      ['axes', W.axes.map((a) => a.key).concat(W.platforms.length ? ['platform'] : []).join(' × ') || 'none'],
      ['cases', W.case_count + ': ' + W.ok + ' ok, ' + W.invalid + ' invalid, ' + W.failed + ' failed']];
    const t = table(['', ''], head.filter((r) => r[1] !== ''), [0, 1]);
    t.id = 'sweep-head';
    s.appendChild(t);
  }

  // Bars of step time, one per case: groups are the combinations of the slower axes, bars in a group the values of
  // the fastest one (a colour each). Cases that did not run are a red cross at the base; those that do not fit pale.
  function drawChart(s, W, bestOf) {
    const C = W.cases, S = Math.max(1, W.series.length), G = Math.max(1, W.groups.length);
    const bw = Math.max(2, Math.min(24, Math.floor(880 / (G * (S + 1))))), gap = bw;
    const L = 80, Rm = 20, T = 16, B = 110;
    const width = Math.max(600, L + Rm + G * (S * bw + gap)), H = 420;
    const yMax = Math.max(1e-9, ...C.map((c) => (c.step_time_ms === null ? 0 : c.step_time_ms))) * 1.08;
    const yOf = (v) => H - B - v / yMax * (H - B - T);
    const xOf = (c) => L + gap / 2 + c.group * (S * bw + gap) + c.series * bw;
    const g = svg('svg', { id: 'sweep-chart', width: width, height: H, viewBox: `0 0 ${width} ${H}` });
    R.axes(g, L, width - Rm, H - B, T, [], R.ticks(0, yMax, 8, yOf), '', 'step time (ms)', String,
      (v) => v.toFixed(0));
    let drawn = 0;
    for (const c of C) {
      const x = xOf(c);
      if (c.status !== 'ok' || c.step_time_ms === null) {
        g.appendChild(svg('text', { x: x + bw / 2, y: H - B - 3, 'text-anchor': 'middle', class: 'bar-missing off',
          'data-index': c.index }, '×'));
        continue;
      }
      const y = yOf(c.step_time_ms);
      g.appendChild(svg('rect', { x: x.toFixed(1), y: y.toFixed(2), width: Math.max(1, bw - 1),
        height: (H - B - y).toFixed(2), fill: colourOf(c.series), 'fill-opacity': c.fits === false ? 0.35 : 0.9,
        class: 'bar-case', 'data-index': c.index, 'data-step-time-ms': String(c.step_time_ms) }));
      if (bestOf.has(c.index)) {
        g.appendChild(svg('text', { x: x + bw / 2, y: y - 3, 'text-anchor': 'middle', class: 'best-mark' }, '★'));
      }
      ++drawn;
    }
    g.dataset.bars = String(drawn);
    // Group names under the axis, rotated; every k-th when they would overlap.
    const every = Math.max(1, Math.ceil(26 / (S * bw + gap)));
    W.groups.forEach((name, k) => {
      if (k % every) return;
      const x = L + gap / 2 + k * (S * bw + gap) + S * bw / 2, y = H - B + 12;
      g.appendChild(svg('text', { x: x, y: y, 'text-anchor': 'end', transform: `rotate(-35 ${x} ${y})` },
        name.length > 36 ? name.slice(0, 35) + '…' : name));
    });
    g.addEventListener('mousemove', (ev) => {
      const r = g.getBoundingClientRect();
      const x = ev.clientX - r.left, span = S * bw + gap;
      const grp = Math.floor((x - L - gap / 2) / span), ser = Math.floor((x - L - gap / 2 - grp * span) / bw);
      const c = C.find((k) => k.group === grp && k.series === ser);
      if (!c) { untip(); return; }
      tip(ev, c.name + ': ' + c.label + '\n' + (c.status === 'ok' ? 'step ' + fixed(c.step_time_ms, 2) + ' ms, ' +
        verdict(c) + ', peak reserved ' + fixed(c.peak_reserved_gib, 2) + ' GiB' : c.status + ': ' + (c.error || '')));
    });
    g.addEventListener('mouseleave', untip);
    const wrap = el('div', { class: 'sweep-chart-wrap' });
    wrap.appendChild(g);
    s.appendChild(legend(W.series.map((name, k) => [(W.series_axis === 'platform' ? 'platform ' : '') + name,
      colourOf(k)])));
    s.appendChild(el('p', { class: 'note' }, 'Grouped by ' + (W.groups.length > 1 ? 'the other swept values' : 'case') +
      '; pale: does not fit in memory; ★ the best case of its layout; red ×: invalid or failed ' +
      '(the table says why).'));
    s.appendChild(wrap);
  }

  // Every case; a click on a column's name sorts by it (again: the other way). Cases without a figure sort last.
  function drawCases(s, W) {
    const cols = [['#', (c) => c.index, String], ['case', (c) => c.name, String]];
    W.axes.forEach((a, k) => cols.push([a.column, (c) => c.values[k], String]));
    if (W.platforms.length) cols.push(['platform', (c) => c.platform, String]);
    cols.push(['status', (c) => c.status, String], ['step ms', (c) => c.step_time_ms, (v) => fixed(v, 2)],
      ['MFU', (c) => c.mfu, (v) => fixed(v, 4)], ['tokens/s', (c) => c.tokens_per_s, (v) => fixed(v, 0)],
      ['peak reserved GiB', (c) => c.peak_reserved_gib, (v) => fixed(v, 2)],
      ['peak alloc GiB', (c) => c.peak_alloc_gib, (v) => fixed(v, 2)], ['fit', (c) => c.fits, () => ''],
      ['headroom GiB', (c) => c.headroom_gib, (v) => fixed(v, 2)], ['error', (c) => c.error, (v) => v || '']);
    const left = new Set([1, cols.length - 1]);  // and every column of text (the override values, platform, status)
    if (W.cases.length) cols.forEach(([, get], k) => { if (typeof get(W.cases[0]) === 'string') left.add(k); });
    const t = el('table', { id: 'sweep-cases', class: 'sortable' });
    const head = el('tr');
    const rows = W.cases.map((c) => {
      const tr = el('tr', { 'data-index': c.index, 'data-status': c.status,
        'data-step-time-ms': c.step_time_ms === null ? '' : String(c.step_time_ms),
        'data-fits': c.fits === null ? '' : String(c.fits) });
      cols.forEach(([name, get, fmt], k) => {
        const v = get(c);
        const td = el('td', left.has(k) ? { class: 'l' } : {},
          v === null || v === undefined ? '' : fmt(v));
        if (name === 'fit' && v !== null) td.appendChild(el('span', { class: v ? 'fits' : 'nofit' }, verdict(c)));
        if (name === 'status' && v !== 'ok') td.className += ' off';
        if (name === 'error') td.className += ' err';
        tr.appendChild(td);
      });
      return tr;
    });
    let by = -1, dir = 1;
    cols.forEach(([name, get], k) => {
      const th = el('th', left.has(k) ? { class: 'l' } : {}, name);
      th.title = 'sort by ' + name;
      th.addEventListener('click', () => {
        dir = by === k ? -dir : 1;
        by = k;
        const order = W.cases.map((c, i) => i);
        order.sort((a, b) => {
          const va = get(W.cases[a]), vb = get(W.cases[b]);
          const na = va === null || va === undefined, nb = vb === null || vb === undefined;
          if (na || nb) return na === nb ? a - b : na ? 1 : -1;
          const d = typeof va === 'string' ? va.localeCompare(vb, 'en', { numeric: true }) : va - vb;
          return d ? dir * d : a - b;
        });
        for (const i of order) t.appendChild(rows[i]);
        t.dataset.sortedBy = name + (dir > 0 ? ' up' : ' down');
      });
      head.appendChild(th);
    });
    t.appendChild(head);
    for (const tr of rows) t.appendChild(tr);
    // A link may sort on load: #sort=<column name> (the browser test does).
    const want = /(?:^#|&)sort=([^&]*)/.exec(location.hash);
    const th = want && [...head.children].find((h) => h.textContent === decodeURIComponent(want[1]));
    if (th) th.click();
    s.appendChild(el('h3', {}, 'Every case (click a column to sort)'));
    s.appendChild(t);
  }

  function drawBest(s, W) {
    s.appendChild(el('h3', {}, 'Best case per layout (the fastest that ran and fits)'));
    const rows = W.layouts.map((l) => {
      const c = l.best === null ? null : W.cases[l.best];
      return [l.label, l.cases, l.fit, c ? c.name : 'none fits', c ? c.label : '', c ? fixed(c.step_time_ms, 2) : '',
        c ? fixed(c.mfu, 4) : '', c ? fixed(c.peak_reserved_gib, 2) : '', c ? fixed(c.headroom_gib, 2) : ''];
    });
    const t = table(['layout', 'cases', 'ran and fit', 'best case', 'label', 'step ms', 'MFU', 'peak reserved GiB',
      'headroom GiB'], rows, [0, 3, 4]);
    t.id = 'sweep-best';
    s.appendChild(t);
    if (!W.axes.some((a) => a.layout)) {
      s.appendChild(el('p', { class: 'note' }, 'No swept key sets the layout (tp, cp, pp, ep, etp, interleaving, ' +
        'world size): every case has the base\'s layout.'));
    }
  }

  R.drawSweep = function (W) {
    const s = section('sweep', 'Sweep: ' + W.name);
    s.dataset.cases = String(W.cases.length);
    s.dataset.ok = String(W.ok);
    const bestOf = new Set(W.layouts.filter((l) => l.best !== null).map((l) => l.best));
    drawHead(s, W);
    drawBest(s, W);
    s.appendChild(el('h3', {}, 'Step time per case'));
    drawChart(s, W, bestOf);
    drawCases(s, W);
  };
})();
