// Turns the step format's locator strings into Playwright locators: css=, text=, label=, placeholder=, button=,
// role=, testid=, or bare CSS.
import type { Locator, Page } from "playwright-core";
import { exactRoleName, ROLE_LOCATOR } from "../manifest/locator-syntax";

type Role = Parameters<Page["getByRole"]>[0];

/** `"quoted"` text means an exact match; unquoted text matches a substring, ignoring case. */
function textArg(raw: string): { text: string; exact: boolean } {
  const m = /^"(.*)"$/s.exec(raw.trim());
  return m ? { text: m[1] as string, exact: true } : { text: raw.trim(), exact: false };
}

export function locate(page: Page, locator: string): Locator {
  const eq = locator.indexOf("=");
  const kind = eq > 0 ? locator.slice(0, eq).trim().toLowerCase() : "";
  const rest = eq > 0 ? locator.slice(eq + 1) : locator;
  switch (kind) {
    case "css":
      return page.locator(`css=${rest}`);
    case "text": {
      const t = textArg(rest);
      return page.getByText(t.text, { exact: t.exact });
    }
    case "label": {
      const t = textArg(rest);
      return page.getByLabel(t.text, { exact: t.exact });
    }
    case "placeholder": {
      const t = textArg(rest);
      return page.getByPlaceholder(t.text, { exact: t.exact });
    }
    case "button": {
      // The button or link of that accessible name; only when the page has none, the element showing that text.
      const t = textArg(rest);
      const named = page.getByRole("button", { name: t.text, exact: t.exact }).or(page.getByRole("link", { name: t.text, exact: t.exact }));
      return named.or(page.locator("html").filter({ hasNot: named }).getByText(t.text, { exact: t.exact }));
    }
    case "testid":
      return page.getByTestId(rest.trim());
    case "role": {
      const m = ROLE_LOCATOR.exec(rest);
      if (!m) throw new Error(`invalid role locator "${locator}": write role=button or role=button[name="Sign in"]`);
      const name = m[2] ?? m[3];
      return page.getByRole((m[1] as string).toLowerCase() as Role, name === undefined ? {} : { name: name.replace(/\\(.)/g, "$1"), exact: exactRoleName(m) });
    }
    default:
      // Anything else (a bare CSS selector, xpath=…) is Playwright's own selector syntax.
      return page.locator(locator);
  }
}
