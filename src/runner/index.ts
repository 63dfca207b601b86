// Registers the run engine and the runner-lease sweeper with `svc serve`.
import { serverExtensions } from "../extensions";
import { RunEngine } from "./engine";
import { LeaseSweeper } from "./lease-sweeper";

serverExtensions.engines.push((core) => new RunEngine(core));
serverExtensions.engines.push((core) => new LeaseSweeper(core));
