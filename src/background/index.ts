// Registers the scheduler and the alert delivery engine with `svc serve`.
import { serverExtensions } from "../extensions";
import { AlertDeliveryEngine } from "./alert-delivery";
import { SchedulerEngine } from "./scheduler";

serverExtensions.engines.push((core) => new SchedulerEngine(core));
serverExtensions.engines.push((core) => new AlertDeliveryEngine(core));
