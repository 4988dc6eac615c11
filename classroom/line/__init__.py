"""Class mode's line wing: the grading queue and the workers that empty it.

The queue with leases (queue.py), a job's place in the waiting line (line.py), the snapshot every open
Practice page follows (live.py), the wait forecast (eta.py) from measured grading times
(grading_times.py, reference_times.py), the worker (worker.py) and one job through the grader
(grading.py), and the queue's numbers for Prometheus (metrics.py).

May import: classroom.data (a verdict is stored through it, and so is the LMS outbox it makes due),
grader/, course.common and prometheus_client; never classroom.web, classroom.analytics nor classroom.lti, and never
Streamlit or course.app (.importlinter `class-wings`, `class-worker`).
"""
