report --color never --assume-mps off tests/verdicts/kineto-mps-off
