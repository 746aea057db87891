import { otpCodesTable } from '../../auth/schema.js';
import { devicesTable, queueTable } from '../../push/schema.js';
import { driverConformance } from '../driver-conformance.js';
import { repositoryConformance } from '../repos-conformance.js';
import { sqliteHarness } from '../test-drivers.js';

driverConformance(sqliteHarness);
repositoryConformance(sqliteHarness, { otp: otpCodesTable, devices: devicesTable, queue: queueTable, declared: [otpCodesTable, devicesTable, queueTable] });
