/** The sink behind the plain onLines handler: collects one chunk's lines as text. */
import type { LineSink } from "./line-splitter.js";

export class CollectingSink implements LineSink {
  readonly lines: string[] = [];

  constructor(
    readonly historical: boolean,
    readonly mtimeMs: number,
  ) {}

  line(text: string): void {
    this.lines.push(text);
  }
}
