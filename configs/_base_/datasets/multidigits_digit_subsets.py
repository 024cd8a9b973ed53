# Two partial label sets of MultiDigits' ten digits that overlap on 3-6: the label sets of the
# teachers of configs/multi_teacher/ (docs/multi_teacher.md). Variables only.
digits = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']
digits_0_to_6 = ['0', '1', '2', '3', '4', '5', '6']
digits_3_to_9 = ['3', '4', '5', '6', '7', '8', '9']
