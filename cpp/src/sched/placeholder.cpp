// replaced by the area's sources
