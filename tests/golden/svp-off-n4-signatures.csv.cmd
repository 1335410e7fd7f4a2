report --format csv --table signatures --baseline samples/streams_vs_processes/traces/mps-off/n1 samples/streams_vs_processes/traces/mps-off/n4
