/* The heatmap drawing that both pages share: nmt align's explorer
   (explorer.html) and nmt serve's page (serve.html). embed.py puts this
   file into each at build time, so that there is one copy to change.
   Weights are bytes (the weight x 255, rounded), colours the 256 entries of
   a palette (nmt_heat_rgb's, which the pictures use too). */
var NmtHeatmap = (function () {
  'use strict';

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;';
    });
  }

  /* flat gold links [src, tgt, src, tgt, ...] as a set of cells i * ns + j:
     1 for a sure link, 2 for one of the flat list `possible` */
  function goldCells(flat, ns, possible) {
    var gold = {};
    if (flat) for (var g = 0; g + 1 < flat.length; g += 2) gold[flat[g + 1] * ns + flat[g]] = 1;
    if (possible) for (g = 0; g + 1 < possible.length; g += 2) gold[possible[g + 1] * ns + possible[g]] = 2;
    return gold;
  }

  /* float rows (as the API answers) as bytes, row-major */
  function quantize(rows) {
    var nt = rows.length, ns = nt ? rows[0].length : 0, w = new Uint8Array(nt * ns);
    for (var i = 0; i < nt; i++) for (var j = 0; j < ns; j++) {
      var v = rows[i][j];
      w[i * ns + j] = Math.round((v > 1 ? 1 : v > 0 ? v : 0) * 255);
    }
    return w;
  }

  /* the model's links: each target word but the last (</s>) to the source
     word (not </s>) it attends to most, the lower index on a tie; -1 for
     none (as nmt_align_hard) */
  function hardLinks(w, ns, nt) {
    var h = [];
    for (var i = 0; i + 1 < nt; i++) {
      var best = -1;
      for (var j = 0; j + 1 < ns; j++) if (best < 0 || w[i * ns + j] > w[i * ns + best]) best = j;
      h.push(best);
    }
    return h;
  }

  /* a table: source words across, target words down, a cell per weight;
     gold cells outlined (class g; a possible one g p, dashed), the model's
     links dotted (class m).
     o: {src, tgt, w, palette, gold (goldCells), hard, m (data-m)} */
  function table(o) {
    var ns = o.src.length, nt = o.tgt.length, w = o.w, gold = o.gold || {}, hard = o.hard || [];
    var h = ['<table class="hm" data-m="' + o.m + '"><thead><tr><th></th>'];
    for (var j = 0; j < ns; j++) h.push('<th><span>' + esc(o.src[j]) + '</span></th>');
    h.push('</tr></thead><tbody>');
    for (var i = 0; i < nt; i++) {
      h.push('<tr><th>' + esc(o.tgt[i]) + '</th>');
      for (j = 0; j < ns; j++) {
        var gc = i < nt - 1 && j < ns - 1 ? gold[i * ns + j] : 0;
        var cls = (gc ? (gc === 2 ? 'g p' : 'g') : '') + (hard[i] === j ? ' m' : '');
        h.push('<td' + (cls ? ' class="' + cls.trim() + '"' : '') + ' style="background:' + o.palette[w[i * ns + j]] + '"></td>');
      }
      h.push('</tr>');
    }
    h.push('</tbody></table>');
    return h.join('');
  }

  /* a tile on a canvas: a few pixels a cell, gold links outlined in amber,
     the model's links as dark dots. o: as table's, with ns and nt */
  function tile(canvas, o) {
    var ns = o.ns, nt = o.nt, w = o.w, gold = o.gold || {}, hard = o.hard || [];
    var s = Math.max(2, Math.min(6, Math.floor(84 / Math.max(ns, nt))));
    canvas.width = ns * s; canvas.height = nt * s;
    var ctx = canvas.getContext('2d');
    for (var i = 0; i < nt; i++) for (var j = 0; j < ns; j++) {
      ctx.fillStyle = o.palette[w[i * ns + j]];
      ctx.fillRect(j * s, i * s, s, s);
    }
    ctx.fillStyle = '#f0a000';
    for (i = 0; i < nt - 1; i++) for (j = 0; j < ns - 1; j++)
      if (gold[i * ns + j] === 2) {  /* possible: the outline's corners only, a broken line */
        ctx.fillRect(j * s, i * s, 1, 1); ctx.fillRect((j + 1) * s - 1, i * s, 1, 1);
        ctx.fillRect(j * s, (i + 1) * s - 1, 1, 1); ctx.fillRect((j + 1) * s - 1, (i + 1) * s - 1, 1, 1);
      } else if (gold[i * ns + j]) {  /* an outline one pixel wide, inside the cell */
        ctx.fillRect(j * s, i * s, s, 1); ctx.fillRect(j * s, (i + 1) * s - 1, s, 1);
        ctx.fillRect(j * s, i * s, 1, s); ctx.fillRect((j + 1) * s - 1, i * s, 1, s);
      }
    ctx.fillStyle = '#111';
    var d = Math.max(1, Math.floor(s / 3)), off = Math.floor((s - d) / 2);  /* whole pixels: no blur */
    for (i = 0; i < nt - 1; i++)
      if (hard[i] >= 0) ctx.fillRect(hard[i] * s + off, i * s + off, d, d);
  }

  /* From now on, what goes wrong on the page (uncaught errors, resources
     that fail to load, console.error) is pushed onto the array returned:
     each page's #selftest reports it to the browser tests. */
  function collectErrors() {
    var errors = [];
    window.addEventListener('error', function (e) {
      errors.push(String(e.message || (e.target && (e.target.src || e.target.href)) || 'error'));
    }, true);
    var consoleError = console.error;
    console.error = function () {
      errors.push(Array.prototype.join.call(arguments, ' '));
      consoleError.apply(console, arguments);
    };
    return errors;
  }

  return {esc: esc, goldCells: goldCells, quantize: quantize, hardLinks: hardLinks,
          table: table, tile: tile, collectErrors: collectErrors};
})();
