// Render a local, self-contained HTML file in headless Chromium and print what a reader would see.
//
//   node tests/browser/render_html.mjs FILE.html [SELECTOR] [--screenshot PNG]
//
// Loads file://FILE, waits for SELECTOR (default `body`) to be visible, then prints one JSON object:
//   title           document.title
//   text            the body's visible text (innerText), whitespace collapsed
//   svgCount        number of <svg> elements
//   dataset         {name: value} for every element with a data-figure="name" attribute; value is its
//                   data-value attribute if present, else its visible text (collapsed). A name used by more
//                   than one element maps to the list of their values, in document order.
//   consoleErrors   console.error messages and uncaught exceptions
//   failedRequests  [{url, reason}]: every request that is not file:// or data: (blocked, never sent: a
//                   self-contained report makes none), and every file:// or data: request that failed
// With --screenshot PNG it saves what the page shows there (after the wait; on failure too).
// On failure it prints {"error", "screenshot", "pageText"} and exits 1.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { TIMEOUT_MS, collectConsoleErrors, guardNetwork, runScript, squash } from "./_chromium.mjs";

const argv = process.argv.slice(2);
const shotAt = argv.indexOf("--screenshot");
const screenshotPath = shotAt >= 0 ? argv.splice(shotAt, 2)[1] : null;
const [file, selector = "body"] = argv;
if (!file) {
  process.stderr.write("usage: render_html.mjs FILE.html [SELECTOR] [--screenshot PNG]\n");
  process.exit(2);
}

await runScript(
  async ({ context, page }) => {
    const local = (url) => url.startsWith("file:") || url.startsWith("data:");
    const failedRequests = await guardNetwork(context, local, "not file:// or data:");
    const consoleErrors = collectConsoleErrors(page);
    await page.goto(pathToFileURL(path.resolve(file)).href, { waitUntil: "load" });
    try {
      await page.locator(selector).first().waitFor({ state: "visible" });
    } catch (error) {
      throw new Error(`no visible element matches ${selector} after ${TIMEOUT_MS} ms (${error.message.split("\n")[0]})`);
    }
    const seen = await page.evaluate(() => {
      const squashed = (text) => (text ?? "").replace(/\s+/g, " ").trim();
      const dataset = {};
      for (const element of document.querySelectorAll("[data-figure]")) {
        const name = element.getAttribute("data-figure");
        const value = element.hasAttribute("data-value") ? element.getAttribute("data-value") : squashed(element.innerText);
        if (!(name in dataset)) dataset[name] = value;
        else if (Array.isArray(dataset[name])) dataset[name].push(value);
        else dataset[name] = [dataset[name], value];
      }
      return {
        title: document.title,
        text: document.body ? document.body.innerText : "",
        svgCount: document.querySelectorAll("svg").length,
        dataset,
      };
    });
    if (screenshotPath) await page.screenshot({ path: screenshotPath, fullPage: true });
    return { ...seen, text: squash(seen.text), consoleErrors, failedRequests };
  },
  { screenshotPath },
);
