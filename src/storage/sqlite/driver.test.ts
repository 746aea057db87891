import { driverConformance } from '../driver-conformance.js';
import { sqliteHarness } from '../test-drivers.js';

driverConformance(sqliteHarness);
