report --format csv --table devices --baseline samples/triton_single_sm/traces/mps-off/n1 samples/triton_single_sm/traces/mps-on/n8
