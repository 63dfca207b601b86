// Imported first by the entry: the page's policy forbids eval, so zod must not even probe for it (a refused probe
// is still a reported Content-Security-Policy violation). The manifest's schemas are used as soon as they load.
import { config } from "zod";

config({ jitless: true });
