report --color never --baseline tests/gains/gpt2-off-n1 --compare tests/gains/gpt2-on-n4 tests/gains/gpt2-off-n4
