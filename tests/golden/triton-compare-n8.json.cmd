report --format json --baseline samples/triton_single_sm/traces/mps-off/n1 --compare samples/triton_single_sm/traces/mps-on/n8 samples/triton_single_sm/traces/mps-off/n8
