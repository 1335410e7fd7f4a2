-- Nsight Systems 2020-shaped export: the GPU has no uuid (TARGET_INFO_GPU 2020 form plus
-- TARGET_INFO_CUDA_GPU with the memory size). Two processes of the one host on CUDA device 0
-- of the same name and memory: one GPU, marked inferred. Added 2026-12-02.
CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES(1,'spin'),(2,'spin()');
CREATE TABLE TARGET_INFO_GPU(vmId INTEGER, deviceId INTEGER, name TEXT, busLocation TEXT, isDiscrete INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES(1, 0, 'Tesla V100-SXM2-16GB', '0000:3b:00.0', 1);
CREATE TABLE TARGET_INFO_CUDA_GPU(pid INTEGER, deviceId INTEGER, name TEXT, numMultiprocessors INTEGER, computeCapabilityMajor INTEGER, computeCapabilityMinor INTEGER, globalMemorySize INTEGER);
INSERT INTO TARGET_INFO_CUDA_GPU VALUES(56747, 0, 'Tesla V100-SXM2-16GB', 80, 7, 0, 16945512448);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL);
-- pids 56747 and 56800 (<< 24), vmId 1 (1 << 48)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1000, 2000, 0, 1, 7, 1, 281474976710656 + 56747 * 16777216, 2, 1, 16, 80, 1, 1, 128, 1, 1, 0, 0),
  (1500, 2500, 0, 1, 7, 1, 281474976710656 + 56800 * 16777216, 2, 1, 16, 80, 1, 1, 128, 1, 1, 0, 0);
