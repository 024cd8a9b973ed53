from .multi_label import MultiLabelMetrics, SampleMAP

__all__ = ['MultiLabelMetrics', 'SampleMAP']
