report --color never --baseline samples/saturating/traces/mps-off/n1 --compare samples/saturating/traces/mps-on/n4 samples/saturating/traces/mps-off/n4
