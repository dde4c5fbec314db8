// What every scenario gives the runner: a name to select it by, what it measures (one line),
// its sizes for the header, a time budget for the watchdog, and run(), which prints its report.

export interface Scenario {
  name: string;
  title: string;
  sizes(): string;
  budgetMs(): number;
  run(): Promise<void>;
}

export const out = (text = "") => process.stdout.write(text + "\n");
