"""Box and anchor operators of object detection: box_nms, box_iou, box_encode/decode, bipartite_matching, MultiBox*, Proposal."""
