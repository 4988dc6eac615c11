"""The Bottleneck page's experiment: a synthetic copy task with and without attention (task), its charts and views."""
