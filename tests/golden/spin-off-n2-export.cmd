export --chrome @OUT@ --baseline samples/spin/traces/mps-off/n1 samples/spin/traces/mps-off/n2
