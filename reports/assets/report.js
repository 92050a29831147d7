
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('ktune-data').textContent);
  var charts = [];
  var colors = ['#2f6fde', '#e0702b', '#2a9d5c', '#c0392b', '#8e44ad', '#16a2b8', '#b8860b', '#7f8c8d'];
  var outcomeColors = { ok: '#2a9d5c', compile_error: '#8e44ad', exceeds_limits: '#b8860b', launch_error: '#c0392b',
                        incorrect: '#e74c3c', timeout: '#e0702b', crashed: '#6c1d15', skipped: '#95a5a6' };
  Chart.defaults.animation = false;
  Chart.defaults.responsive = true;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.size = 11;

  function canvas(k, name) { return document.getElementById('chart-' + k + '-' + name); }

  /// Sizes a canvas to its box (device pixels) and returns its 2D context scaled to CSS pixels.
  function fitted(c) {
    var box = c.parentNode, ratio = window.devicePixelRatio || 1;
    var w = Math.max(box.clientWidth, 200), h = Math.max(box.clientHeight, 150);
    c.width = Math.round(w * ratio); c.height = Math.round(h * ratio);
    c.style.width = w + 'px'; c.style.height = h + 'px';
    var ctx = c.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    return { ctx: ctx, w: w, h: h };
  }

  function make(c, config) { charts.push(new Chart(c, config)); }

  /// Log-axis tick labels in short form: at 1, 2 and 5 times a power of ten, or at the powers of
  /// ten alone when the axis spans more than three decades (the labels would overlap).
  function logTick(v, index, ticks) {
    var span = Math.log10(ticks[ticks.length - 1].value / ticks[0].value);
    var lead = Number(Number(v).toPrecision(1));
    var digit = String(lead).replace(/^0\.0*/, '').charAt(0);
    if (span > 3 ? digit !== '1' : '125'.indexOf(digit) < 0) return '';
    return lead >= 1e5 || lead < 1e-3 ? lead.toExponential(0) : String(lead);
  }

  function logAxis(title) {
    return { type: 'logarithmic', title: { display: true, text: title }, ticks: { callback: logTick, autoSkip: false } };
  }

  function speedup(k, d) {
    var c = canvas(k, 'speedup');
    make(c, { type: 'bar',
      data: { labels: d.labels, datasets: [{ label: 'speed-up over baseline (\u00d7)', data: d.values,
        backgroundColor: d.values.map(function (v) { return v >= 1 ? '#2a9d5c' : '#c0392b'; }) }] },
      options: { plugins: { legend: { display: false },
                            tooltip: { callbacks: { afterLabel: function (t) { return 'over ' + d.baselines[t.dataIndex]; } } } },
                 scales: { y: { title: { display: true, text: 'baseline time / winner time' } } } } });
  }

  /// Winners named on the roofline up to this many; past it the names cover the points (a
  /// 500x300 panel holds about two dozen) and are in the tooltips only.
  var maxWinnerLabels = 24;
  var rooflineMarks = {};  // canvas id -> { labels, connectors } drawn, for the self-test

  /// The first of the places around a point (right, left, then above and below them) where a
  /// w x h label stays in the plot and overlaps none already placed; else the first place.
  function labelBox(e, w, h, area, placed) {
    var places = [[8, 0], [-8 - w, 0], [8, -h], [8, h], [-8 - w, -h], [-8 - w, h]].map(function (o) {
      return { x: e.x + o[0], y: e.y + o[1] - h / 2, w: w, h: h };
    });
    var free = function (r) {
      return r.x >= area.left && r.x + r.w <= area.right && r.y >= area.top && r.y + r.h <= area.bottom &&
        placed.every(function (q) { return r.x + r.w <= q.x || q.x + q.w <= r.x || r.y + r.h <= q.y || q.y + q.h <= r.y; });
    };
    return places.filter(free)[0] || places[0];
  }

  /// Draws each winner's shape next to it and a dotted line from each baseline to the winner of
  /// its key (datasets 1 and 2 of the roofline).
  function marksPlugin(d) {
    return { id: 'ktuneRooflineMarks', afterDatasetsDraw: function (chart) {
      var drawn = rooflineMarks[chart.canvas.id] = { labels: 0, connectors: 0 };
      if (d.winners.length > maxWinnerLabels) return;
      var ctx = chart.ctx, winners = chart.getDatasetMeta(1).data, baselines = chart.getDatasetMeta(2).data;
      var winnerOf = {};
      d.winners.forEach(function (p, i) { winnerOf[p[2]] = winners[i]; });
      ctx.save();
      ctx.strokeStyle = '#1d2330'; ctx.lineWidth = 1; ctx.setLineDash([2, 2]);
      d.baselines.forEach(function (p, i) {
        var w = winnerOf[p[2]];
        if (!w) return;
        ctx.beginPath(); ctx.moveTo(baselines[i].x, baselines[i].y); ctx.lineTo(w.x, w.y); ctx.stroke();
        drawn.connectors++;
      });
      ctx.font = '10px sans-serif'; ctx.textBaseline = 'middle';
      var placed = [];
      d.winners.forEach(function (p, i) {
        var text = d.shapes[p[2]], box = labelBox(winners[i], ctx.measureText(text).width + 4, 13, chart.chartArea, placed);
        placed.push(box);
        ctx.fillStyle = 'rgba(255,255,255,0.8)'; ctx.fillRect(box.x, box.y, box.w, box.h);
        ctx.fillStyle = '#8a3d0c'; ctx.fillText(text, box.x + 2, box.y + box.h / 2);
        drawn.labels++;
      });
      ctx.restore();
    } };
  }

  function roofline(k, d) {
    var c = canvas(k, 'roofline');
    var flops = d.mode === 'flops';
    var all = d.points.concat(d.winners, d.baselines);
    var xs = all.map(function (p) { return p[0]; });
    var xmin = Math.min.apply(null, xs) / 2, xmax = Math.max.apply(null, xs) * 2;
    var toXY = function (p) { return { x: p[0], y: p[1], s: p[2] }; };
    var sets = [
      { type: 'scatter', label: 'candidates', data: d.points.map(toXY), backgroundColor: 'rgba(47,111,222,0.35)', pointRadius: 2 },
      { type: 'scatter', label: 'winners', data: d.winners.map(toXY), backgroundColor: '#e0702b', pointRadius: 5 },
      { type: 'scatter', label: 'baselines', data: d.baselines.map(toXY), backgroundColor: '#1d2330', pointStyle: 'triangle', pointRadius: 5 }];
    d.ceilings.forEach(function (ceil, i) {
      var line = [];
      if (flops && ceil.tflops && ceil.gbps) {
        var ridge = ceil.tflops * 1000 / ceil.gbps;
        [xmin, Math.min(Math.max(ridge, xmin), xmax), xmax].forEach(function (x) {
          line.push({ x: x, y: Math.min(ceil.tflops, x * ceil.gbps / 1000) });
        });
      } else if (flops && ceil.tflops) {
        line = [{ x: xmin, y: ceil.tflops }, { x: xmax, y: ceil.tflops }];
      } else if (flops) {
        line = [{ x: xmin, y: xmin * ceil.gbps / 1000 }, { x: xmax, y: xmax * ceil.gbps / 1000 }];
      } else if (ceil.gbps) {
        line = [{ x: xmin, y: ceil.gbps }, { x: xmax, y: ceil.gbps }];
      }
      if (line.length) sets.push({ type: 'line', label: 'ceiling ' + ceil.label, data: line, borderColor: colors[(i + 3) % colors.length],
                                   borderDash: [6, 3], pointRadius: 0, fill: false });
    });
    var names = [null, d.winner_labels, d.baseline_labels];
    make(c, { type: 'scatter', data: { datasets: sets }, plugins: [marksPlugin(d)],
      options: { scales: { x: logAxis(flops ? 'arithmetic intensity (FLOP/byte)' : 'bytes moved'),
                           y: logAxis(flops ? 'achieved TFLOP/s' : 'achieved GB/s') },
                 plugins: { tooltip: { callbacks: { label: function (t) {
                   var value = t.parsed.y.toPrecision(4) + (flops ? ' TFLOP/s' : ' GB/s');
                   if (t.raw.s === undefined) return t.dataset.label + ': ' + value;  // a ceiling
                   var name = names[t.datasetIndex] ? ' \u00b7 ' + names[t.datasetIndex][t.dataIndex] : '';
                   return d.shapes[t.raw.s] + name + ': ' + value; } } } } } });
  }

  /// Viridis-like ramp, t in [0, 1] (0 fastest).
  function ramp(t) {
    var stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
    var x = Math.min(Math.max(t, 0), 1) * (stops.length - 1), i = Math.min(Math.floor(x), stops.length - 2), f = x - i;
    var c = stops[i].map(function (v, j) { return Math.round(v + (stops[i + 1][j] - v) * f); });
    return 'rgb(' + c.join(',') + ')';
  }

  function heatmap(k, d) {
    var c = canvas(k, 'heatmap');
    var f = fitted(c), ctx = f.ctx;
    var left = 70, top = 10, right = 120, bottom = 44;
    var gw = (f.w - left - right) / d.xs.length, gh = (f.h - top - bottom) / d.ys.length;
    var times = d.cells.map(function (cell) { return Math.log(cell[2]); });
    var lo = Math.min.apply(null, times), hi = Math.max.apply(null, times), span = hi - lo || 1;
    ctx.fillStyle = '#eceff3'; ctx.fillRect(left, top, gw * d.xs.length, gh * d.ys.length);
    ctx.font = '10px sans-serif'; ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
    d.cells.forEach(function (cell, i) {
      var t = (times[i] - lo) / span, x = left + cell[0] * gw, y = top + (d.ys.length - 1 - cell[1]) * gh;
      ctx.fillStyle = ramp(t); ctx.fillRect(x + 1, y + 1, gw - 2, gh - 2);
      if (gw > 34 && gh > 14) { ctx.fillStyle = t > 0.6 ? '#1d2330' : '#ffffff'; ctx.fillText(cell[2].toPrecision(3), x + gw / 2, y + gh / 2); }
    });
    ctx.fillStyle = '#1d2330';
    d.xs.forEach(function (v, i) { ctx.fillText(v, left + (i + 0.5) * gw, top + gh * d.ys.length + 12); });
    ctx.textAlign = 'right';
    d.ys.forEach(function (v, i) { ctx.fillText(v, left - 6, top + (d.ys.length - 0.5 - i) * gh); });
    ctx.textAlign = 'center'; ctx.font = '11px sans-serif';
    ctx.fillText(d.x, left + gw * d.xs.length / 2, f.h - 10);
    ctx.save(); ctx.translate(14, top + gh * d.ys.length / 2); ctx.rotate(-Math.PI / 2); ctx.fillText(d.y, 0, 0); ctx.restore();
    var lx = f.w - right + 24, lh = f.h - top - bottom;
    for (var s = 0; s < lh; s++) { ctx.fillStyle = ramp(s / lh); ctx.fillRect(lx, top + s, 14, 1); }
    ctx.fillStyle = '#1d2330'; ctx.textAlign = 'left'; ctx.font = '10px sans-serif';
    ctx.fillText(Math.exp(lo).toPrecision(3) + ' \u00b5s', lx + 18, top + 4);
    ctx.fillText(Math.exp(hi).toPrecision(3) + ' \u00b5s', lx + 18, top + lh - 4);
  }

  function spread(k, d) {
    var c = canvas(k, 'spread');
    var range = d.p10.map(function (v, i) { return [v, Math.max(d.p90[i], v * 1.001)]; });
    make(c, { type: 'bar', data: { labels: d.labels, datasets: [
        { type: 'bar', label: 'p10\u2013p90 of candidates', data: range, backgroundColor: 'rgba(47,111,222,0.45)' },
        { type: 'scatter', label: 'median candidate', data: d.p50, backgroundColor: '#1d2330', pointRadius: 3 },
        { type: 'scatter', label: 'slowest', data: d.max, backgroundColor: '#c0392b', pointStyle: 'crossRot', pointRadius: 4 }] },
      options: { scales: { y: logAxis('candidate time / winner time') } } });
  }

  function outcomes(k, d) {
    var c = canvas(k, 'outcomes');
    make(c, { type: 'bar', data: { labels: d.labels, datasets: [{ label: 'configs', data: d.counts,
        backgroundColor: d.labels.map(function (l) { return outcomeColors[l] || '#7f8c8d'; }) }] },
      options: { plugins: { legend: { display: false } }, scales: { y: { beginAtZero: true, title: { display: true, text: 'configs' } } } } });
  }

  function drawAll() {
    data.kernels.forEach(function (kernel, k) {
      [['speedup', speedup], ['roofline', roofline], ['heatmap', heatmap], ['spread', spread], ['outcomes', outcomes]]
        .forEach(function (p) {
          if (!kernel[p[0]]) return;  // nothing to draw: the page has no panel for it
          try { p[1](k, kernel[p[0]]); } catch (e) { window.__ktuneErrors.push(p[0] + ' chart of ' + kernel.name + ': ' + e); }
        });
    });
  }

  function selftest() {
    var out = { errors: window.__ktuneErrors, canvases: {}, scripts: document.scripts.length, charts: charts.length };
    document.querySelectorAll('canvas').forEach(function (c) {
      var px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, n = 0;
      for (var i = 3; i < px.length; i += 4) if (px[i] !== 0) n++;
      out.canvases[c.id] = n;
    });
    out.rooflines = {};  // per roofline chart: the marks it drew
    charts.forEach(function (ch) {
      var id = ch.canvas.id, sets = ch.data.datasets;
      if (!/-roofline$/.test(id)) return;
      var marks = rooflineMarks[id] || { labels: 0, connectors: 0 };
      out.rooflines[id] = { ceilings: sets.filter(function (s) { return s.type === 'line' && s.data.length; }).length,
                            winners: sets[1].data.length, baselines: sets[2].data.length,
                            winner_labels: marks.labels, connectors: marks.connectors };
    });
    document.getElementById('ktune-selftest').textContent = JSON.stringify(out);
  }

  drawAll();
  window.addEventListener('beforeprint', function () { charts.forEach(function (ch) { ch.resize(); }); });
  if (location.hash === '#selftest') selftest();
})();
