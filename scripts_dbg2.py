from referee.simulation.workbench import *
from referee.observation import WorkbenchObservation
r = play_recording(RecordingSpec(seed=23))
cam = observe_truth(Noise(), 23)
for item in inputs(r, cam):
    if isinstance(item, WorkbenchObservation):
        if 440 <= item.frame <= 466:
            s = item.square(1, 1)
            print(item.frame, None if s is None else (s.tile, s.confidence))
    elif item.end_of_turn is not None and item.time > 44:
        print("EOT", item.time)
        if item.time > 47: break
