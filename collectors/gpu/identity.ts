/**
 * The GPUs' identity (index, uuid, name, bus id, driver, power limit) from `nvidia-smi --query-gpu`,
 * read at each start of the dmon child, one read at a time: published as info series and kept by
 * index for `identities()`. A partial answer (one GPU lost, the others listed) still identifies
 * the GPUs it lists; an incomplete one is logged once per run of incomplete reads. A missing
 * nvidia-smi is not logged here: the dmon side reports it.
 */
import type { Logger } from "pino";
import { trustedStdout } from "../exec.js";
import { canonicalBusId } from "../pci.js";
import type { GpuMetrics } from "./metrics.js";
import type { OneShot } from "./one-shot.js";
import { IDENTITY_FIELDS, parseIdentity, type GpuIdentity } from "./parse-query.js";

export function identityArgs(): string[] {
  return [`--query-gpu=${IDENTITY_FIELDS.join(",")}`, "--format=csv,noheader,nounits"];
}

export class GpuIdentities {
  private byIndex = new Map<string, GpuIdentity>();
  private failureLogged = false;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly run: OneShot,
    private readonly metrics: GpuMetrics,
    private readonly log: Logger,
  ) {}

  /** Identity per GPU index from the last read (a new map at each read). */
  get current(): ReadonlyMap<string, GpuIdentity> {
    return this.byIndex;
  }

  /** Reads the identities now. */
  async read(): Promise<void> {
    const r = await this.run(identityArgs());
    const parsed = parseIdentity(trustedStdout(r));
    // Partial output (one GPU lost, the others listed) still identifies the GPUs it lists.
    this.byIndex = new Map(parsed.gpus.map((g) => [g.index, g]));
    this.metrics.publishIdentity(parsed.gpus);
    if (r.ok && parsed.gpus.length > 0 && parsed.errors.length === 0) {
      this.failureLogged = false;
      return;
    }
    // A missing binary is reported once by the dmon side.
    if (r.notFound || this.failureLogged) return;
    this.failureLogged = true;
    const why = parsed.errors[0]?.message ?? r.problem ?? "no GPUs in the output";
    this.log.warn(`gpu: identity query incomplete (${parsed.gpus.length} GPUs identified; samples continue): ${why}`);
  }

  /** Reads them in the background, unless a read is under way. */
  refresh(): void {
    if (this.inFlight) return;
    this.inFlight = this.read()
      .catch((err: unknown) => this.log.warn(`gpu: identity query failed: ${String(err)}`))
      .finally(() => {
        this.inFlight = undefined;
      });
  }

  /** Waits for the background read under way, if any. */
  async settled(): Promise<void> {
    await this.inFlight;
  }

  /** Forgets every GPU and withdraws their series (on stop). */
  clear(): void {
    this.byIndex = new Map();
    this.metrics.publishIdentity([]);
  }

  /** The indexes of the GPUs at this PCI bus id (in any of its spellings). */
  indexesAt(pciBusId: string): string[] {
    const bus = canonicalBusId(pciBusId);
    return [...this.byIndex.values()].filter((g) => g.pciBusId !== undefined && canonicalBusId(g.pciBusId) === bus).map((g) => g.index);
  }
}
