"""Recognises PCL's tutorial milk carton in its scene:
    python3 python/examples/tutorial.py ../shared/data/pcl/data_repo/correspondence_grouping"""

import os
import sys

import grip
from grip.pcd import read_pcd

folder = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/pcl/data_repo/correspondence_grouping"
config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs", "pcl_tutorial.conf")

milk = read_pcd(os.path.join(folder, "milk.pcd"))
scene = read_pcd(os.path.join(folder, "milk_cartoon_all_small_clorox.pcd"))
result = grip.recognise([milk], scene, config=config, overrides={"pipeline": {"device": "cpu"}})

print(f"{len(result.model_keypoints[0])} model keypoints, {len(result.scene_keypoints)} scene keypoints, "
      f"{result.correspondences} correspondences")
for inst in result.instances:
    print(f"{os.path.basename(inst.model_name)}: fitness {inst.fitness:.3f}, rmse {inst.rmse:.2g}, "
          f"{inst.correspondences} correspondences\n{inst.pose.round(4)}")
