// tables.js: the page's data tables: sortable by any column (a click on its heading; again for the
// other order), each with a CSV download of what it holds (as sorted). Used by the range panel
// (area selections) and the statistics. Pure DOM: the rows are plain data, each column says how
// to show, sort and write a value.
'use strict';

/* interface Column {
 *   name,                  // heading
 *   value(row),            // the value sorted and written to the CSV (number or text)
 *   cell?(row),            // what the cell shows (text or a Node; default: value)
 *   num?                   // numbers: right-aligned, sorted most first on the first click
 * } */

// csvField quotes a CSV field when it holds a comma, a quote or a line break (RFC 4180).
function csvField(v) {
  const s = v == null ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

// csvText is the CSV of columns cols over rows (a heading line, then a line per row).
function csvText(cols, rows) {
  const lines = [cols.map((c) => csvField(c.name)).join(',')];
  for (const r of rows) lines.push(cols.map((c) => csvField(c.value(r))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

// download saves `data` (text or a Blob) as a file named `name` through the browser.
function download(name, data, mime) {
  const blob = data instanceof Blob ? data : new Blob([data], { type: mime || 'text/plain' });
  const a = el('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// dataTable builds a table of rows under cols, sorted by column `sort` (index; negative: none),
// with a CSV link (file `csvName`) in a caption. Returns the element holding both.
function dataTable(cols, rows, sort = -1, csvName = 'table.csv') {
  const box = el('div', 'dtable');
  let by = sort, desc = sort >= 0 && !!cols[sort].num;
  const t = el('table');
  const render = () => {
    t.textContent = '';
    const sorted = rows.slice();
    if (by >= 0) {
      const c = cols[by];
      sorted.sort((a, b) => {
        const x = c.value(a), y = c.value(b);
        const cmp = typeof x === 'number' && typeof y === 'number' ? (isNaN(x) ? -Infinity : x) - (isNaN(y) ? -Infinity : y) : String(x).localeCompare(String(y));
        return desc ? -cmp : cmp;
      });
    }
    const tr = el('tr');
    cols.forEach((c, i) => {
      const th = el('th', c.num ? 'num sortable' : 'sortable', `${c.name}${i === by ? (desc ? ' ▾' : ' ▴') : ''}`);
      th.addEventListener('click', () => {
        if (by === i) desc = !desc; else { by = i; desc = !!c.num; }
        render();
      });
      tr.append(th);
    });
    t.append(tr);
    for (const r of sorted) {
      const row = el('tr');
      for (const c of cols) {
        const v = c.cell ? c.cell(r) : c.value(r);
        const td = el('td', c.num ? 'num' : null);
        if (v instanceof Node) td.append(v); else td.textContent = v == null ? '–' : v;
        row.append(td);
      }
      t.append(row);
    }
    box.sorted = sorted;
  };
  render();
  const csv = el('a', 'csv', 'CSV');
  csv.href = '#';
  csv.title = `Download this table (${rows.length} rows) as CSV`;
  csv.addEventListener('click', (e) => { e.preventDefault(); download(csvName, csvText(cols, box.sorted), 'text/csv'); });
  box.append(t, csv);
  return box;
}
