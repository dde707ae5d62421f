// Marks the compiled entry point executable so the `ringwatch` bin runs directly.
import { chmodSync } from "node:fs";
chmodSync(new URL("../dist/agent/main.js", import.meta.url), 0o755);
