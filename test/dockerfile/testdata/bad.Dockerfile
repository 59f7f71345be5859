from golang:1.26 as Build
ENV A b
RUN echo $A
CMD echo hi
CMD echo again
