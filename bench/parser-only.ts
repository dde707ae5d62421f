/**
 * Preload (`node --import`) for coll-matchers.ts: takes the COLL fast path out of the nccl
 * collector's file sinks, so that every line, COLL lines included, is decoded and goes through
 * logs/parse/line.ts (the readable parser), as in a build with no fast path. BENCH_FILE_SINK names
 * the file-sink.js to change (default: the built agent's, in dist/).
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { FileSink as FileSinkClass } from "../collectors/nccl/logs/ingest/file-sink.js";
import { repoRoot } from "./paths.js";

const path = process.env.BENCH_FILE_SINK ?? join(repoRoot, "dist/collectors/nccl/logs/ingest/file-sink.js");
const { FileSink } = (await import(pathToFileURL(path).href)) as { FileSink: typeof FileSinkClass };
const proto = FileSink.prototype as Partial<FileSinkClass>;
// Without lineAt and bytes the line splitter hands every line to line() as text.
delete proto.lineAt;
delete proto.bytes;
if (proto.lineAt !== undefined || proto.bytes !== undefined) throw new Error("bench: the COLL fast path is still on");
