// How long a page test waits for any one thing (the page's ready mark, a
// query's rows, a click's target, a download, a navigation): a safety net
// against a hang, never the outcome. The page gets there in a second or two
// on a quiet machine, and in tens of seconds on a machine at a load of 14 on
// two cores: test_web's 60-version history read without the index (50
// requests one after another) waited past Playwright's default of 30 s
// there. The tests' own timeouts for the whole script are longer still.
//   import { PATIENCE, patient } from './patience.mjs'; patient(page);
export const PATIENCE = 300000;

// Every wait of this page (and its navigations) gets PATIENCE, not 30 s.
export function patient(page) {
  page.setDefaultTimeout(PATIENCE);
  page.setDefaultNavigationTimeout(PATIENCE);
  return page;
}
