report --color never --measure range:timed --baseline tests/gains/resnet18-off-n1 --compare tests/gains/resnet18-on-n4 tests/gains/resnet18-off-n4
