// simumax-sim HTML report, what-if part: two runs (`report DIR_A DIR_B`, or serve's "what-if: system") side by
// side. One table of both summaries with B − A, then each run's timeline, memory curves and busiest links drawn by
// report.js / report_charts.js on one time axis. The sections' data-* attributes are what the browser tests read.
(function () {
  'use strict';
  const R = window.SimumaxReport;
  const { el, section, table, fixed } = R;

  // Communication of the traced ranks (trace.json, every slice): the largest per-rank total and exposed part, ms.
  function comm(run, key) {
    const c = run.timeline && run.timeline.comm;
    return c && c[key].length ? Math.max(...c[key]) / 1000 : undefined;
  }
  function delta(a, b, digits) {
    if (a === undefined || b === undefined) return ['', ''];
    const d = b - a;
    const pct = a !== 0 ? (d >= 0 ? '+' : '') + (100 * d / a).toFixed(1) + ' %' : '';
    return [(d >= 0 ? '+' : '') + d.toFixed(digits), pct];
  }
  function verdict(row, who) {
    if (!row) return '';
    const v = el('span', { class: row.fits === undefined ? 'verdict' : (row.fits ? 'fits verdict' : 'nofit verdict') },
      row.fits === undefined ? 'unknown' : (row.fits ? 'fits' : 'does not fit'));
    v.dataset.run = who;
    v.dataset.stage = String(row.stage);
    v.dataset.fits = row.fits === undefined ? 'unknown' : String(row.fits);
    return v;
  }
  function differenceText(list, labels) {
    const show = (x) => (x === null ? 'none' : String(x));
    return list.map((d) => d.field + ' (' + labels[0] + ': ' + show(d.a) + ', ' + labels[1] + ': ' + show(d.b) + ')').join('; ');
  }

  function drawWhatIfTable(s, W) {
    const [A, B] = W.runs.map((r) => r.summary);
    const L = W.labels;
    const rows = [];
    const number = (name, a, b, digits, note) => {
      const [d, pct] = delta(a, b, digits);
      rows.push([name + (note ? ' ' + note : ''), a === undefined ? 'n/a' : a.toFixed(digits),
        b === undefined ? 'n/a' : b.toFixed(digits), d, pct]);
    };
    const step = (S, who) => {
      const v = el('span', { class: 'whatif-step' }, fixed(S.step_time_ms, 2));
      v.dataset.run = who;
      v.dataset.stepTimeMs = String(S.step_time_ms);
      return v;
    };
    const [dStep, pStep] = delta(A.step_time_ms, B.step_time_ms, 2);
    rows.push(['scenario', A.name || '', B.name || '', '', '']);
    rows.push(['step time (ms)', step(A, 'A'), step(B, 'B'), dStep, pStep]);
    number('MFU', A.mfu, B.mfu, 4);
    number('TFLOPS / GPU', A.tflops_per_gpu, B.tflops_per_gpu, 1);
    number('tokens / s', A.tokens_per_s, B.tokens_per_s, 0);
    number('exposed communication (ms)', comm(W.runs[0], 'exposed_us'), comm(W.runs[1], 'exposed_us'), 2, '¹');
    number('communication (ms)', comm(W.runs[0], 'comm_us'), comm(W.runs[1], 'comm_us'), 2, '¹');
    const gb = (x) => (x === undefined ? undefined : x / (1024 * 1024 * 1024));
    number('GPU memory (GiB)', gb(A.gpu_memory_bytes), gb(B.gpu_memory_bytes), 2);
    const stages = Math.max(A.stages.length, B.stages.length);
    for (let k = 0; k < stages; ++k) {
      const a = A.stages[k], b = B.stages[k];
      number('stage ' + k + ': peak allocated (GiB)', a && gb(a.peak_alloc_bytes), b && gb(b.peak_alloc_bytes), 2);
      number('stage ' + k + ': peak reserved (GiB)', a && gb(a.peak_reserved_bytes), b && gb(b.peak_reserved_bytes), 2);
      number('stage ' + k + ': headroom (GiB)', a && gb(a.headroom_bytes), b && gb(b.headroom_bytes), 2);
      const same = a && b && a.fits === b.fits;
      rows.push(['stage ' + k + ': fit', verdict(a, 'A'), verdict(b, 'B'), a && b ? (same ? 'same' : 'changed') : '', '']);
    }
    const t = table(['', L[0] + ' (A)', L[1] + ' (B)', 'B − A', 'change'], rows, [0]);
    t.id = 'whatif-table';
    s.appendChild(t);
    s.appendChild(el('p', { class: 'note' }, '¹ From trace.json, the largest over the traced ranks: communication is ' +
      'the time any of a rank\'s comm streams is busy, exposed the part of it with no compute (forward, backward, ' +
      'recompute, optimizer) running on the rank. n/a: the run has no trace.json (run with --trace).'));
  }

  // W: {labels: [A, B], runs: [report data, report data], differences: {scenario: [...], platform: [...]},
  // note?: what B is (serve says it itself)}.
  function drawWhatIf(W) {
    const L = W.labels;
    const s = section('whatif', 'What-if: ' + L[0] + ' against ' + L[1]);
    const diff = W.differences || { scenario: [], platform: [] };
    s.dataset.sameScenario = String(diff.scenario.length === 0);
    if (W.note) s.appendChild(el('p', { class: 'note' }, W.note));
    if (diff.scenario.length) {
      s.appendChild(el('p', { class: 'nofit', id: 'whatif-scenario-differs' }, 'The two runs differ in more than the ' +
        'platform: ' + differenceText(diff.scenario, L) + '. The figures below compare two scenarios, not only two ' +
        'platforms.'));
    } else if (!W.note) {
      s.appendChild(el('p', { class: 'note' }, 'Same scenario: the two summary.json agree on the layout, batch, model ' +
        'size, precision, recompute, fidelity, executor and granularity; the runs differ in their platform.'));
    }
    if (diff.platform.length) {
      s.appendChild(el('p', { class: 'note', id: 'whatif-platform-differs' }, 'Platform: ' +
        differenceText(diff.platform, L) + '.'));
    }
    drawWhatIfTable(s, W);

    // Timelines one above the other, on one axis: 0 to the longer run's end; zooming or panning one moves both.
    const ends = W.runs.map((r) => (r.timeline ? r.timeline.end_us : r.summary.step_time_ms * 1000));
    const endUs = Math.max(...ends, 1);
    const view = { t0: 0, t1: endUs }, peers = [];
    if (W.runs.some((r) => r.timeline)) {
      s.appendChild(el('p', { class: 'note' }, 'The timelines below share one time axis (0 to ' +
        (endUs / 1000).toFixed(2) + ' ms, the longer step): zoom or pan either, both follow.'));
    }
    const ids = ['a', 'b'];
    W.runs.forEach((r, i) => {
      if (r.timeline) R.drawTimeline(r.timeline, { id: 'timeline-' + ids[i], title: 'Pipeline timeline: ' + L[i],
        endUs: endUs, view: view, peers: peers });
    });
    // Memory curves in two columns (A left, B right), on one time axis and one memory scale.
    // The scale's top as each run's own page would take it (the GPU's memory when near the peak), the larger one.
    const top = (r) => {
      if (!r.memory) return 0;
      const peak = Math.max(0, ...r.memory.ranks.map((k) => k.peak_allocated_bytes)), gpu = r.summary.gpu_memory_bytes;
      return Math.max(peak * 1.05, gpu && gpu < peak * 1.6 ? gpu * 1.02 : 0);
    };
    const yMaxBytes = Math.max(...W.runs.map(top));
    const pair = el('div', { class: 'whatif-pair', id: 'whatif-memory' });
    s.parentNode.appendChild(pair);
    const into = R.into;
    try {
      W.runs.forEach((r, i) => {
        R.into = pair.appendChild(el('div', { class: 'whatif-column' }));
        if (r.memory) R.drawMemory(r.memory, r.summary, endUs, { id: 'memory-' + ids[i], title: 'Memory over the step: ' + L[i],
          yMaxBytes: yMaxBytes, prefix: ids[i] + '-' });
      });
    } finally {
      R.into = into;
    }
    W.runs.forEach((r, i) => {
      if (r.links) R.drawLinks(r.links, { id: 'links-' + ids[i], title: 'Busiest links: ' + L[i] });
    });
  }

  Object.assign(R, { drawWhatIf });
})();
