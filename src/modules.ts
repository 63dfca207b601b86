// Imports every module that registers an engine or HTTP extension for `svc serve` (see src/extensions.ts).
import "./http/web";
import "./http/operations";
import "./http/runner";
import "./runner";
import "./generation/engine";
import "./background";
import "./retention/engine";
import "./retention/artifact-objects";
