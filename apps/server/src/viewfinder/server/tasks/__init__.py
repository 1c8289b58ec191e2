"""Tasks that score themselves: a task file (the env, its apps and files, an instruction,
a step limit, a checker), the checker's predicates, and suites of tasks run by agents
(``viewfinder tasks``). See docs/tasks.md."""
