report --color never samples/spin/traces/mps-off/n4
