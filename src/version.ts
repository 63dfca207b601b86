// The version of svc, from package.json (embedded at build time).
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
