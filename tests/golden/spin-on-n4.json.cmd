report --format json --baseline samples/spin/traces/mps-off/n1 samples/spin/traces/mps-on/n4
