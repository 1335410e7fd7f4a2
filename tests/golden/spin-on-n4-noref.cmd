report --color never samples/spin/traces/mps-on/n4
