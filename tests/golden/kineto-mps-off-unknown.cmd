report --color never tests/verdicts/kineto-mps-off
