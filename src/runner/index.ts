// Registers the run engine with `svc serve`.
import { serverExtensions } from "../extensions";
import { RunEngine } from "./engine";

serverExtensions.engines.push((core) => new RunEngine(core));
