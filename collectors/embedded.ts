/**
 * What the single executable (scripts/package/sea.mjs) carries inside itself in place of the files
 * that lie beside the compiled code in dist/: the version (package.json), the kubelet's
 * pod-resources API (podresources/api.proto, as protobufjs JSON) and the modules worker threads
 * start from (as data: URLs). The bundler defines RINGWATCH_EMBEDDED; in dist/ and in the sources
 * it is not defined, and every reader falls back to its file.
 */
export interface Embedded {
  /** package.json's version. */
  version: string;
  /** podresources/api.proto parsed by protobufjs (its toJSON()), for @grpc/proto-loader's fromJSON. */
  podResourcesApi: object;
  /** ESM modules by name (`read-worker`, `bcryptjs`), each a data:text/javascript URL. */
  modules: Readonly<Record<string, string>>;
}

declare const RINGWATCH_EMBEDDED: Embedded | undefined;

/** The embedded files of the single executable; undefined everywhere else. */
export const EMBEDDED: Embedded | undefined = typeof RINGWATCH_EMBEDDED === "undefined" ? undefined : RINGWATCH_EMBEDDED;
