// Click links on a page as a reader does (each opens a new tab) and print what each tab shows, in headless Chromium.
//
//   node tests/browser/click_links.mjs URL SELECTOR [SELECTOR...] [--allow ORIGIN] [--screenshots DIR]
//
// Opens URL (a file:// page or one served on loopback), then for each SELECTOR (a Playwright selector of one link)
// clicks it and waits for the tab it opens; prints {opened: [{selector, href, url, text}], consoleErrors,
// blockedRequests}: `text` the new tab's body text (innerText) — what the link showed. Requests go only to URL's
// origin, file:// and --allow ORIGIN (others are aborted and listed). With --screenshots DIR it saves DIR/page.png
// and DIR/opened-<i>.png per tab; on failure DIR/failure.png, {"error", "screenshot", "pageText"} and exit 1.
import path from "node:path";
import { collectConsoleErrors, guardNetwork, log, runScript } from "./_chromium.mjs";

const argv = process.argv.slice(2);
const take = (flag) => {
  const at = argv.indexOf(flag);
  return at >= 0 ? argv.splice(at, 2)[1] : null;
};
const screenshots = take("--screenshots");
const allow = take("--allow");
const [url, ...selectors] = argv;
if (!url || !selectors.length) {
  process.stderr.write("usage: click_links.mjs URL SELECTOR [SELECTOR...] [--allow ORIGIN] [--screenshots DIR]\n");
  process.exit(2);
}
const origins = [url.startsWith("file:") ? "file:" : new URL(url).origin, ...(allow ? [allow] : [])];

await runScript(
  async ({ context, page }) => {
    const blockedRequests = await guardNetwork(context, (u) => origins.some((o) => u.startsWith(o)), "not an allowed origin");
    const consoleErrors = collectConsoleErrors(page);
    await page.goto(url, { waitUntil: "load" });
    if (screenshots) await page.screenshot({ path: path.join(screenshots, "page.png"), fullPage: true });
    const opened = [];
    for (const [index, selector] of selectors.entries()) {
      const link = page.locator(selector).first();
      await link.scrollIntoViewIfNeeded();
      const href = await link.getAttribute("href");
      const [tab] = await Promise.all([context.waitForEvent("page"), link.click()]);
      await tab.waitForLoadState("load");
      const text = await tab.locator("body").innerText();
      log(`${selector}: opened ${tab.url()}`);
      if (screenshots) await tab.screenshot({ path: path.join(screenshots, `opened-${index}.png`) });
      opened.push({ selector, href, url: tab.url(), text });
      await tab.close();
    }
    return { opened, consoleErrors, blockedRequests };
  },
  { screenshotPath: screenshots ? path.join(screenshots, "failure.png") : null },
);
