// Imports every module that registers an engine or HTTP extension for `svc serve` (see src/extensions.ts).
import "./http/web";
import "./http/operations";
import "./runner";
import "./generation/engine";
import "./retention/engine";
