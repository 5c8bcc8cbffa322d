// Lay out a local HTML report in headless Chromium at a given window width and say what a reader cannot see.
//
//   node tests/browser/html_layout.mjs FILE.html WIDTH [--screenshot PNG]
//
// Prints one JSON object:
//   width            the window's inner width (px), as asked
//   pageOverflow     how many px the page is wider than the window (0: no horizontal scroll)
//   scrolled         [{table, scrollWidth, clientWidth}]: a `.scroll` box whose content is wider than the box
//                    (a column behind a horizontal scroll bar)
//   clipped          [{table, column, text, left, right, reason}]: a visible table cell outside the window, or
//                    whose content is wider than the cell
//   midWordBreaks    [{name, line}]: a task or provider name (th.name / td.name) wrapped inside a word, i.e. a
//                    line of it ends on a letter or digit and the next begins with one; `line` is the text of
//                    the line that was cut
//   cells, names     how many cells and names were checked
// With --screenshot PNG it saves the whole page as laid out. On failure: {"error", "screenshot", "pageText"}, exit 1.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { guardNetwork, runScript } from "./_chromium.mjs";

const argv = process.argv.slice(2);
const shotAt = argv.indexOf("--screenshot");
const screenshotPath = shotAt >= 0 ? argv.splice(shotAt, 2)[1] : null;
const [file, widthText] = argv;
const width = Number(widthText);
if (!file || !Number.isInteger(width) || width < 200) {
  process.stderr.write("usage: html_layout.mjs FILE.html WIDTH [--screenshot PNG]\n");
  process.exit(2);
}

await runScript(
  async ({ context, page }) => {
    await guardNetwork(context, (url) => url.startsWith("file:") || url.startsWith("data:"), "not file:// or data:");
    await page.goto(pathToFileURL(path.resolve(file)).href, { waitUntil: "load" });
    const seen = await page.evaluate(() => {
      const view = document.documentElement.clientWidth;
      const tableOf = (el) => el.closest("table")?.id || "(no id)";
      const columnOf = (cell) => cell.getAttribute("data-label") || cell.closest("table")?.querySelectorAll("thead th")[cell.cellIndex]?.innerText || "";
      const scrolled = [];
      for (const box of document.querySelectorAll(".scroll")) {
        if (box.scrollWidth > box.clientWidth + 1) {
          scrolled.push({ table: box.querySelector("table")?.id || "", scrollWidth: box.scrollWidth, clientWidth: box.clientWidth });
        }
      }
      const clipped = [];
      let cells = 0;
      for (const cell of document.querySelectorAll("table th, table td")) {
        const r = cell.getBoundingClientRect();
        if (r.width === 0 && r.height === 0) continue; // not laid out (display: none)
        cells += 1;
        const where = { table: tableOf(cell), column: columnOf(cell), text: cell.innerText.trim().slice(0, 40) };
        if (r.left < -0.5 || r.right > view + 0.5) clipped.push({ ...where, left: r.left, right: r.right, reason: "outside the window" });
        else if (cell.scrollWidth > cell.clientWidth + 1) {
          clipped.push({ ...where, left: r.left, right: r.right, reason: `content ${cell.scrollWidth} px in a ${cell.clientWidth} px cell` });
        }
      }
      const midWordBreaks = [];
      let names = 0;
      const wordy = /[\p{L}\p{N}]/u;
      for (const el of document.querySelectorAll("th.name, td.name")) {
        if (el.getClientRects().length === 0) continue;
        names += 1;
        const chars = []; // [character, top of its box] in reading order
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (let i = 0; i < node.data.length; i += 1) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const box = range.getClientRects()[0];
            if (box) chars.push([node.data[i], box.top]);
          }
        }
        let line = "";
        for (let i = 0; i < chars.length; i += 1) {
          const [ch, top] = chars[i];
          if (i > 0 && top > chars[i - 1][1] + 2) {
            const before = chars[i - 1][0];
            if (wordy.test(before) && wordy.test(ch)) midWordBreaks.push({ name: el.innerText.trim(), line });
            line = "";
          }
          line += ch;
        }
      }
      return {
        width: view,
        pageOverflow: Math.max(0, document.documentElement.scrollWidth - view),
        scrolled,
        clipped,
        midWordBreaks,
        cells,
        names,
      };
    });
    if (screenshotPath) await page.screenshot({ path: screenshotPath, fullPage: true });
    return seen;
  },
  { screenshotPath, viewport: { width, height: 900 } },
);
