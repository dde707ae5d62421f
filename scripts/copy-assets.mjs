// Copies the non-TypeScript files the compiled code reads at run time into dist/, next to it:
// the kubelet's pod-resources API (collectors/job/podresources/api.proto).
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const ASSETS = ["collectors/job/podresources/api.proto"];
const root = fileURLToPath(new URL("..", import.meta.url));
for (const rel of ASSETS) {
  const to = `${root}dist/${rel}`;
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(`${root}${rel}`, to);
}
