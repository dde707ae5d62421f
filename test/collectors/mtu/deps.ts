/** Test wiring for the mtu collector (shared with other collectors' tests). */
export { fakesDir, makeDeps, series, valueOf, type Series } from "../../helpers/collector-deps.js";
